# Planted defect: the first wgmma descriptor says 64B swizzle (layout bits 62-63 = 2) where TMA
# wrote 128B-swizzled tiles (1).
0,/4611686568183201792/s//0x8000008000000000/
