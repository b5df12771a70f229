# Planted defect: the first tcgen05 shared-memory descriptor (the A operand of CuTe's Blackwell
# tutorials 04/05: SBO 1024, LBO 16) says 64B swizzle (layout bits 61-63 = 4) where TMA wrote
# 128B-swizzled tiles (2).
0,/4611756662049538048/s//0x8000404000010000/
