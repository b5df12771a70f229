# Fix of CUTLASS 4.2's Blackwell FMHA forward (example 77): the softmax warps store the row
# statistics with tcgen05.st and arrive on the correction warps' mbarrier (pipeline_c's
# producer_commit) with no tcgen05.wait::st, so the correction's tcgen05.ld may read them before
# they land: tcgen05.st is asynchronous and only tcgen05.wait::st waits for it; producers "must
# explicitly wait for the instructions' completion before synchronizing with the consumer threads"
# (PTX ISA 9.7.16.6.4.4). Inserts tcgen05.wait::st after every tcgen05.st.
s/^(tcgen05\.st\.sync\.aligned\.[^;]*;)/\1\ntcgen05.wait::st.sync.aligned;/
