# Fix of NVIDIA's wgmma_tma_sm90 tutorial: its main loop refills a pipeline stage on every one of
# its k_tile_count + K_PIPE_MAX iterations, so the last refills (boxes past K) are still in
# flight when the CTA exits. The refill of the NT kernel (the first in the module) is skipped
# once no k-tile is left (%r1427 holds k_tile_count - 1 in nvcc 13.0's code; the edit fails
# loudly if another nvcc lays it out differently).
0,/^@%p5 bra \$L__BB0_8;$/s//{\n.reg .pred %ptail;\nsetp.lt.s32 %ptail, %r1427, 2;\nor.pred %ptail, %ptail, %p5;\n@%ptail bra $L__BB0_8;\n}/
