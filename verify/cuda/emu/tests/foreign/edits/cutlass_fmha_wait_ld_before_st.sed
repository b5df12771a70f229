# Fix of CUTLASS 4.2's Blackwell FMHA forward (example 77): the softmax warps read S with tcgen05.ld
# and then store the row statistics (V0 = S0) and P (P0 = S0 + 32) over the columns they read, and
# the correction warps store O's chunk i after loading chunk i + 1, with no tcgen05.wait::ld
# between: "To enforce such memory orderings and avoiding anti-dependency hazards around
# tcgen05.ld, tcgen05.wait::ld must be used" (PTX ISA 9.7.16.6.4.5). Inserts tcgen05.wait::ld before
# every tcgen05.st (a no-op where no load is pending).
s/^(tcgen05\.st\.sync\.aligned\.[^;]*;)/tcgen05.wait::ld.sync.aligned;\n\1/
