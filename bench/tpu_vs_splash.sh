#!/usr/bin/env bash
# kgen's tpu kernels against JAX's own Splash kernel, by libtpu's static bundle counts
# (docs/benchmarks.md, docs/tpu-static-cost.md). Nothing runs on a TPU.
# Usage: bench/tpu_vs_splash.sh [OUT_DIR]   (default bench-results/tpu; make bench-tpu)
# Generates the kernels of bench/specs/tpu/ (the explicit-mask specs' BigBird mask first),
# compiles each kernel and Splash's deviceless for the spec's generation and writes
# OUT_DIR/table.md (the per-step table, then kgen ÷ Splash) and OUT_DIR/cost.json.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results/tpu}
kgen=${KGEN:-build/generator/kgen}
mkdir -p "$out"
.venv/bin/python specs/masks/make_bigbird_mask.py --seq-len 4096 --out bench/specs/tpu/masks/bigbird_4k.npy
"$kgen" gen bench/specs/tpu/*.json --out "$out/generated" >/dev/null
.venv-libtpu/bin/python bench/tpu_static_cost.py bench/specs/tpu/*.json --generated "$out/generated" \
    --kgen "$kgen" --json "$out/cost.json" 2>"$out/stderr.log" | tee "$out/table.md"
