# Fix of CUTLASS 4.2's sm100 TMA epilogue (example 71): store_tail waits for the epilogue's TMA
# stores only when it reused C's shared memory, so a CTA can exit while its last stores still read
# its shared memory. ptxemu reports a CTA exiting with copies in flight on its shared memory (its
# rule; the PTX ISA does not say what the hardware does with them). Inserts
# cp.async.bulk.wait_group.read 0 before every ret (a no-op for a thread with no bulk group).
s/^ret;$/cp.async.bulk.wait_group.read 0;\nret;/
