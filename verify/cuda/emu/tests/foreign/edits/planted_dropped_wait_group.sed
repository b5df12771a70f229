# Planted defect: wgmma.wait_group 0 (the wait before the accumulators are read) is dropped.
s/^wgmma\.wait_group\.sync\.aligned 0;/\/\/ planted: wgmma.wait_group 0 dropped/
