# Fix of CUTLASS 4.2's sm100 tile scheduler (example 71): its inline asm declares the ctaid of a
# clusterlaunchcontrol.query_cancel response as outputs ("=r") but writes them only when the
# cancel succeeded (@p1 ... get_first_ctaid), and the kernel computes with them either way:
# ptxemu reports registers nothing has written (its rule; the PTX ISA gives such a register an
# unknown value). Writes 0 to the three before the predicated query.
s/^@p1 clusterlaunchcontrol\.query_cancel\.get_first_ctaid\.v4\.b32\.b128 \{(%r[0-9]+), (%r[0-9]+), (%r[0-9]+), _\}, clc_result;$/mov.b32 \1, 0;\nmov.b32 \2, 0;\nmov.b32 \3, 0;\n&/
