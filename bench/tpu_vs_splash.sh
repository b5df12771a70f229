#!/usr/bin/env bash
# kgen's tpu kernels against JAX's own Splash kernel, by libtpu's static bundle counts
# (docs/benchmarks.md, docs/tpu-static-cost.md, docs/tuning.md). Nothing runs on a TPU.
# Usage: bench/tpu_vs_splash.sh [OUT_DIR]   (default bench-results/tpu; make bench-tpu)
# Generates the kernels of bench/specs/tpu/ (the explicit-mask specs' BigBird mask first),
# compiles each kernel and Splash's deviceless for the spec's generation and writes
# OUT_DIR/table.md (the per-step table at the specs' tiles, then kgen ÷ Splash) and
# OUT_DIR/cost.json. Then best against best: kgen tune measures the TPU_BEST_BUDGET tilings
# nearest kgen's default rule (default 4; 0 skips this part) of each spec's forward and
# backward into OUT_DIR/tuning, bench/tpu_best_vs_best.py compiles Splash at the same tilings
# (forward, its dq and dkv, its fused dkv) and writes OUT_DIR/best_vs_best.md and .json.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-results/tpu}
kgen=${KGEN:-build/generator/kgen}
budget=${TPU_BEST_BUDGET:-4}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
.venv/bin/python specs/masks/make_bigbird_mask.py --seq-len 4096 --out bench/specs/tpu/masks/bigbird_4k.npy
"$kgen" gen bench/specs/tpu/*.json --out "$out/generated" >/dev/null
.venv-libtpu/bin/python bench/tpu_static_cost.py bench/specs/tpu/*.json --generated "$out/generated" \
    --kgen "$kgen" --json "$out/cost.json" 2>"$out/stderr.log" | tee "$out/table.md"
[ "$budget" = 0 ] && exit 0
for spec in bench/specs/tpu/*.json; do
  for pass in forward backward; do
    "$kgen" tune "$spec" --target tpu --pass "$pass" --budget "$budget" --jobs "$jobs" \
        --tables "$out/tuning" >>"$out/tune.log" 2>&1
  done
done
.venv-libtpu/bin/python bench/tpu_best_vs_best.py bench/specs/tpu/*.json --kgen "$kgen" --tables "$out/tuning" \
    --budget "$budget" --parallel "$jobs" --json "$out/best_vs_best.json" 2>>"$out/stderr.log" | tee "$out/best_vs_best.md"
