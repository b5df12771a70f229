# Planted defect: every tcgen05.wait::ld (CUTLASS's fence_view_async_tmem_load after the
# epilogue's accumulator loads) is dropped.
s/^tcgen05\.wait::ld\.sync\.aligned;[[:space:]]*$/\/\/ planted: tcgen05.wait::ld dropped/
