# Fix of NVIDIA's 01_mma_sm100 tutorial: its threads copy A and B into shared memory with generic
# stores (cooperative_copy) that tcgen05.mma then reads in the async proxy; "accessing the same
# memory location across multiple proxies needs a cross-proxy fence" (PTX ISA 9.7.16.6.5, "Shared
# Memory Accesses"). Inserts fence.proxy.async.shared::cta before every bar.sync 0.
s/^bar\.sync 0;$/fence.proxy.async.shared::cta;\nbar.sync 0;/
