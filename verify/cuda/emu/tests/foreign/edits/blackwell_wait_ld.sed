# Fix of NVIDIA's Blackwell CuTe tutorials (01-05): their threads read the accumulator with
# tcgen05.ld, use the registers, and after __syncthreads the first warp deallocates those columns,
# with no tcgen05.wait::ld. A register dependency "does not imply that a dependee instruction's
# memory accesses will be performed before a dependent instruction's memory accesses ... To enforce
# such memory orderings and avoiding anti-dependency hazards around tcgen05.ld, tcgen05.wait::ld
# must be used" (PTX ISA 9.7.16.6.4.5), and producers "must explicitly wait for the instructions'
# completion before synchronizing with the consumer threads" (9.7.16.6.4.4). Inserts
# tcgen05.wait::ld before every bar.sync 0 (a no-op where no load is pending).
s/^bar\.sync 0;$/tcgen05.wait::ld.sync.aligned;\nbar.sync 0;/
