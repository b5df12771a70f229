# Fix of CUTLASS 4.2's sm100 GEMM kernel (example 71): the MMA warp initializes the tmem_dealloc
# mbarrier after the pipelines' fence.mbarrier_init and then arrives at the cluster barrier with
# .relaxed, which releases nothing; the peer CTA's MMA warp later arrives on that mbarrier. "Release
# local barrier state via generic proxy: mbarrier.init; fence.mbarrier_init.release.cluster;
# barrier.cluster.arrive.relaxed" (PTX ISA, membar/fence, Examples). Inserts that fence before
# every barrier.cluster.arrive.relaxed.aligned.
s/^barrier\.cluster\.arrive\.relaxed\.aligned;$/fence.mbarrier_init.release.cluster;\nbarrier.cluster.arrive.relaxed.aligned;/
