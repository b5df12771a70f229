#!/usr/bin/env bash
# Regenerates the receipts in docs/receipts/ (docs/receipts.md): runs each check that a
# kernel's receipt records and hands its facts (JSON) to `kgen receipt add`, the one writer.
#
#   verify/write_receipts.sh SPEC...          `make verify`: for each spec, its tpu kernel run
#                                             on the CPU (kgen verify), the real-dialect check,
#                                             libtpu's deviceless compile for its generation;
#                                             its sm90a and sm100a kernels' nvcc + SASS checks
#                                             and their runs on ptxemu, the CPU emulator
#                                             (cpu_emulation; never a hardware run)
#   verify/write_receipts.sh --only TARGET SPEC...  the same for one target's checks only (tpu,
#                                             sm90a or sm100a)
#   verify/write_receipts.sh --gpu SPEC...    `make verify-gpu`, on a GPU machine that builds
#                                             kgen: each sm90a kernel run by its GPU harness
#   verify/write_receipts.sh --gpu-runs DIR   here, after `verify/cuda/run_on_gpu.sh run` ran on
#                                             a lent GPU: records DIR/<name>.json (the harness
#                                             receipts it wrote) as the gpu checks
#
# Tools: KGEN (build/generator/kgen), PYTHON (.venv/bin/python), LIBTPU_PYTHON
# (.venv-libtpu/bin/python). A check that fails is recorded as failed; one that could not run
# records nothing (its receipt stays stale or incomplete). Either makes the exit status 1.
set -uo pipefail
cd "$(dirname "$0")/.."
kgen=${KGEN:-build/generator/kgen}
python=${PYTHON:-.venv/bin/python}
libtpu_python=${LIBTPU_PYTHON:-.venv-libtpu/bin/python}
export JAX_PLATFORMS=cpu TPU_SKIP_MDS_QUERY=1  # no accelerator is probed; no TPU metadata server
facts=$(mktemp -d)
trap 'rm -rf "$facts"' EXIT
status=0

# record SPEC TARGET CHECK COMMAND...: runs COMMAND, which writes $facts/CHECK.json, and
# records those facts in the receipt.
record() {
  local spec=$1 target=$2 check=$3 result
  shift 3
  rm -f "$facts/$check.json"
  "$@"
  result=$?
  [ $result = 0 ] || status=1
  if [ -s "$facts/$check.json" ]; then
    "$kgen" receipt add "$spec" --target "$target" --check "$check" --facts "$facts/$check.json" || status=1
  else
    echo "$spec: the $target $check check wrote no facts; nothing recorded" >&2
    status=1
  fi
}

# libtpu prints pages of harmless noise (docs/tpu-deviceless-compile.md): show its summary
# line on success, everything but the E0000/W0000 lines on failure.
libtpu_compile() {
  local log=$facts/libtpu.log
  if "$libtpu_python" tests/mosaic_dialect/tpu_deviceless_compile.py "$@" >"$log" 2>&1; then
    grep "compiled in" "$log"
  else
    grep -v "^E0000\|^W0000" "$log"
    return 1
  fi
}

# name, tpu generation (libtpu's name for it; - without tpu) and whether sm90a and sm100a are
# targets.
spec_facts() {
  "$python" - "$1" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
targets = spec["targets"]
generation = targets["tpu"]["generation"] if "tpu" in targets else "-"
print(spec["name"], {"v7": "tpu7x"}.get(generation, generation), "sm90a" in targets, "sm100a" in targets)
PY
}

only=
if [ "${1:-}" = --only ]; then
  only=${2:-}
  case $only in tpu|sm90a|sm100a) shift 2 ;; *) sed -n '5,15p' "$0" >&2; exit 2 ;; esac
fi
# wanted TARGET: whether this run records TARGET's checks.
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }

case "${1:-}" in
  --gpu-runs)
    [ $# -eq 2 ] && [ -d "$2" ] || { sed -n '5,15p' "$0" >&2; exit 2; }
    for run in "$2"/*.json; do
      name=$(basename "$run" .json)
      # The feature specs of tests/cuda/specs run too; their kernels are not checked in.
      [ -f "specs/$name.json" ] || { echo "$name: not in specs/, no receipt"; continue; }
      "$kgen" receipt add "specs/$name.json" --target sm90a --check gpu --facts "$run" || status=1
    done
    exit $status
    ;;
  --gpu)
    shift
    (($#)) || { sed -n '5,15p' "$0" >&2; exit 2; }
    for spec in "$@"; do
      read -r name generation sm90a sm100a < <(spec_facts "$spec") || { status=1; continue; }
      [ "$sm90a" = True ] || continue
      record "$spec" sm90a gpu "$kgen" verify "$spec" --target sm90a --gpu --receipt "$facts/gpu.json"
    done
    exit $status
    ;;
  ""|-*)
    sed -n '5,15p' "$0" >&2
    exit 2
    ;;
esac

# each_module CHECK COMMAND...: runs COMMAND once per tpu module of the spec (the forward's or
# decode kernel's, the backward's dq and dkv and a split decode kernel's combine when generated), with MODULE and OPERANDS replaced by its
# files and REPORT by a report of its own; then writes $facts/CHECK.json: passed when every
# module passed, each module's facts under "modules".
each_module() {
  local check=$1 ok=0 reports=()
  shift
  for module in generated/$name/$name.tpu.mlir generated/$name/$name.tpu.dq.mlir generated/$name/$name.tpu.dkv.mlir \
      generated/$name/$name.tpu.combine.mlir; do
    [ -f "$module" ] || continue
    local report=$facts/$check.$(basename "$module" .mlir).json args=()
    for arg in "$@"; do
      case $arg in
        MODULE) args+=("$module") ;;
        OPERANDS) args+=("${module%.mlir}.operands.json") ;;
        REPORT) args+=("$report") ;;
        *) args+=("$arg") ;;
      esac
    done
    "${args[@]}" || ok=1
    reports+=("$report")
  done
  "$python" - "$facts/$check.json" "${reports[@]}" <<'PY' || ok=1
import json, os, sys
modules = {}
for path in sys.argv[2:]:
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        sys.exit(0)  # a module wrote no facts: nothing is recorded
    modules[os.path.basename(path).split(".", 1)[1][: -len(".json")] + ".mlir"] = json.load(open(path))
json.dump({"passed": all(m.get("passed", False) for m in modules.values()), "modules": modules},
          open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
  return $ok
}

for spec in "$@"; do
  read -r name generation sm90a sm100a < <(spec_facts "$spec") || { status=1; continue; }
  if [ "$generation" != - ] && wanted tpu; then
    record "$spec" tpu cpu_execution "$kgen" verify "$spec" --target tpu --report "$facts/cpu_execution.json"
    record "$spec" tpu mosaic_dialect each_module mosaic_dialect "$python" tests/mosaic_dialect/check_real_mosaic.py \
      MODULE --operands OPERANDS --quiet --report REPORT
    record "$spec" tpu libtpu_compile each_module libtpu_compile libtpu_compile MODULE --operands OPERANDS \
      --target "$generation" --no-checks --report REPORT
  fi
  if [ "$sm90a" = True ] && wanted sm90a; then
    record "$spec" sm90a nvcc_sass "$kgen" verify "$spec" --target sm90a --compile-only --report "$facts/nvcc_sass.json"
    record "$spec" sm90a cpu_emulation "$kgen" verify "$spec" --target sm90a --report "$facts/cpu_emulation.json"
  fi
  if [ "$sm100a" = True ] && wanted sm100a; then  # no Blackwell GPU exists here: compiled, and run on ptxemu
    record "$spec" sm100a nvcc_sass "$kgen" verify "$spec" --target sm100a --compile-only --report "$facts/nvcc_sass.json"
    record "$spec" sm100a cpu_emulation "$kgen" verify "$spec" --target sm100a --report "$facts/cpu_emulation.json"
  fi
done
exit $status
