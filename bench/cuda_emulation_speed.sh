#!/usr/bin/env bash
# The speed of ptxemu, kgen's CPU emulator of sm_90a/sm_100a PTX (docs/cuda-emulation.md): every
# emulated harness of the feature specs (tests/cuda/specs, tests/cuda/sm100a_specs; make build
# builds them) run once, and per kernel launch the CTAs, warp and thread instructions executed,
# seconds, and thread-instructions per second. The emulator's speed, not a GPU's: nothing here
# says how fast a kernel runs on hardware.
#   bench/cuda_emulation_speed.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
for harness in "$build"/verify/cuda/sm90a_emu_run_sm90a_* "$build"/verify/cuda/sm90a_emu_backward_run_sm90a_* \
               "$build"/verify/cuda/sm100a_emu_run_sm100a_*; do
  [ -x "$harness" ] || continue
  name=${harness##*_run_}
  spec=tests/cuda/specs/$name.json
  [ -f "$spec" ] || spec=tests/cuda/sm100a_specs/$name.json
  KGEN_EMU_STATS=$stats "$harness" "$spec" >/dev/null
done
.venv/bin/python - "$stats" <<'PY'
import json, re, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| spec | kernel | CTAs | warp instructions | thread instructions | seconds | M thread-instructions/s |")
print("|---|---|---|---|---|---|---|")
total_threads = total_seconds = 0
for r in rows:
    spec = re.search(r"kgen\d+(\w+?)_sm(?:90|100)a", r["kernel"]).group(1)
    role = next((k for k in ("preprocess", "postprocess", "backward", "forward") if k + "_kernel" in r["kernel"]), "?")
    rate = r["thread_instructions"] / r["seconds"] / 1e6
    total_threads += r["thread_instructions"]
    total_seconds += r["seconds"]
    print(f"| {spec} | {role} | {r['ctas_run']} | {r['warp_instructions']:,} | {r['thread_instructions']:,} | "
          f"{r['seconds']:.3f} | {rate:.1f} |")
print(f"| all | | | | {total_threads:,} | {total_seconds:.2f} | {total_threads / total_seconds / 1e6:.1f} |")
PY
