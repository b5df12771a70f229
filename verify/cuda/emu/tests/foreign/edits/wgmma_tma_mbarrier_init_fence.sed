# Fix of NVIDIA's wgmma_tma_sm90 tutorial: its mbarrier.init are used by TMA (the async proxy)
# with only a cluster barrier after them; fence.mbarrier_init.release.cluster (what CUTLASS's own
# pipelines issue, cutlass::arch::fence_barrier_init) goes before the cluster barrier's arrive.
s/^([[:space:]]*)barrier\.cluster\.arrive\.aligned;/\1fence.mbarrier_init.release.cluster;\n\1barrier.cluster.arrive.aligned;/
