# Fix of NVIDIA's wgmma_sm90 tutorial: cp.async writes shared memory in the generic proxy (PTX
# ISA, cp.async) and wgmma reads it in the async proxy, so "an async proxy fence must be used"
# between them (PTX ISA, wgmma.fence). Inserts fence.proxy.async before every wgmma.fence.
s/^([[:space:]]*)wgmma\.fence\.sync\.aligned;/\1fence.proxy.async.shared::cta;\n\1wgmma.fence.sync.aligned;/
