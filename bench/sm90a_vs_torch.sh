#!/usr/bin/env bash
# Benchmark: kgen's sm90a kernels against torch SDPA (cuDNN, flash) and FlexAttention on an
# H100/H200, for the families of bench/specs/ (causal, sliding window, softcap, documents)
# at 4k, 8k and 16k tokens. In two halves, as verify/cuda/run_on_gpu.sh:
#
#   bench/sm90a_vs_torch.sh pack   here: make bench-cuda, then strip the benchmark harnesses
#                                  into .sm90a-bench/ (git-ignored; carry it to the device)
#   bench/sm90a_vs_torch.sh run    there, from the repository root: each harness checks one
#                                  (batch, head) slice against the reference and times the
#                                  kernel; bench/torch_baselines.py times the baselines;
#                                  bench/plot_sm90a.py writes the table and the plot. Output:
#                                  $OUT/sm90a_vs_torch.{jsonl,md,png} (or bench-results/).
#
# Effective TFLOP/s count only kept (i, j) pairs. Documents are 1024 tokens long.
set -euo pipefail
cd "$(dirname "$0")/.."
pack_dir=.sm90a-bench
document_length=1024
iterations=30

case "${1:-}" in
  pack)
    make bench-cuda
    rm -rf "$pack_dir" && mkdir -p "$pack_dir"
    for spec in bench/specs/*.json; do
      name=$(basename "$spec" .json)
      strip -o "$pack_dir/sm90a_run_$name" "build/verify/cuda/sm90a_run_$name"
    done
    du -sh "$pack_dir"
    ;;
  run)
    out=${OUT:-bench-results}
    mkdir -p "$out"
    results=$out/sm90a_vs_torch.jsonl
    : >"$results"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
    for spec in bench/specs/*.json; do
      name=$(basename "$spec" .json)
      report=$("$pack_dir/sm90a_run_$name" "$spec" --slices 1 --bench "$iterations" \
                 --document-length "$document_length" 2>&1) || true
      echo "$report" >>"$out/harness.log"
      python3 - "$name" "$report" >>"$results" <<'EOF'
import json, re, sys
name, report = sys.argv[1], sys.argv[2]
time = re.search(r"median ([0-9.]+) ms .*; ([0-9.]+) effective TFLOP/s", report)
record = {"spec": name, "backend": "kgen_sm90a", "passed": report.rstrip().endswith("PASS")}
if time:
    record.update({"median_ms": float(time.group(1)), "tflops": float(time.group(2))})
print(json.dumps(record))
EOF
    done
    python3 bench/torch_baselines.py bench/specs/*.json --iterations "$iterations" \
      --document-length "$document_length" >>"$results"
    python3 bench/plot_sm90a.py "$results" "$out/sm90a_vs_torch.png" | tee "$out/sm90a_vs_torch.md"
    ;;
  *)
    sed -n '2,14p' "$0" >&2
    exit 2
    ;;
esac
