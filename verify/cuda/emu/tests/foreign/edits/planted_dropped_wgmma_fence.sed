# Planted defect: wgmma.fence (ordering register writes before wgmma reads them) is dropped.
s/^wgmma\.fence\.sync\.aligned;/\/\/ planted: wgmma.fence dropped/
