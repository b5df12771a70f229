# Fix of NVIDIA's Blackwell CuTe tutorials (01-05): they read the accumulator with tcgen05.ld right
# after waiting for the MMA's commit, and deallocate after __syncthreads, with no tcgen05 fences.
# The PTX ISA (9.7.16.6.4.4, "Non-pipelined instructions, different thread", Example 2; 9.7.16.6.4.2
# Example 2 for the same thread) asks for tcgen05.fence::after_thread_sync between the mbarrier
# wait and the tcgen05.ld, and for a hand-off to another thread (here the dealloc after
# __syncthreads) the producer's tcgen05.wait::ld and tcgen05.fence::before_thread_sync, the
# consumer's tcgen05.fence::after_thread_sync (Example 1). Inserts the fence after every CuTe
# wait_barrier loop (its inline asm ends at the label DONE) and the three around every bar.sync 0.
s/^bar\.sync 0;$/tcgen05.wait::ld.sync.aligned;\ntcgen05.fence::before_thread_sync;\nbar.sync 0;\ntcgen05.fence::after_thread_sync;/
s/^DONE:$/DONE:\ntcgen05.fence::after_thread_sync;/
