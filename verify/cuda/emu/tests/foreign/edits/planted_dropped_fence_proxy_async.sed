# Planted defect: every fence.proxy.async.shared::cta (ordering the epilogue's generic stores to
# shared memory before the TMA store reads them in the async proxy) is dropped.
s/^fence\.proxy\.async\.shared::cta;$/\/\/ planted: fence.proxy.async dropped/
