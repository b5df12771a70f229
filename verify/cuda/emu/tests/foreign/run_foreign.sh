#!/usr/bin/env bash
# Runs one foreign (NVIDIA CUTLASS) example on ptxemu and checks what it prints.
#
#   run_foreign.sh --program P --expect REGEX --status ok|fail
#                  [--reject REGEX] [--kernel REGEX] [--edit SED_FILE]... -- ARGS...
#
# Without --edit the program runs as built. With it, its PTX is dumped once
# (KGEN_EMU_DUMP_PTX), the module whose text matches --kernel (default: wgmma.mma_async) is
# edited by each sed -E script file in turn (edits/*.sed: a fix of NVIDIA's code, or a planted
# defect) and the program runs again on the edited module (KGEN_EMU_PTX).
# Each edit must change the module (else the edit is stale for this nvcc: the test fails and
# says so). The test passes when the output matches REGEX (grep -E), matches no --reject REGEX,
# and the exit status is 0 (--status ok) or not (--status fail).
set -uo pipefail

program="" expect="" status="" kernel="wgmma.mma_async" reject=""
edits=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --program) program="$2"; shift 2 ;;
    --expect) expect="$2"; shift 2 ;;
    --status) status="$2"; shift 2 ;;
    --reject) reject="$2"; shift 2 ;;
    --kernel) kernel="$2"; shift 2 ;;
    --edit) edits+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_foreign.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$program" && -n "$expect" && -n "$status" ]] || { echo "run_foreign.sh: --program, --expect and --status are required" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ ${#edits[@]} -gt 0 ]]; then
  mkdir "$work/dump"
  # The modules are dumped when the program first launches a kernel: the dumping run stops
  # once the module is there and its size stays put (the rest of that run is not needed).
  KGEN_EMU_DUMP_PTX="$work/dump" "$program" "$@" > "$work/dump.log" 2>&1 &
  dumper=$!
  module="" size=-1
  for ((t = 0; t < 6000; ++t)); do
    running=1
    kill -0 "$dumper" 2>/dev/null || running=0
    module="$(grep -lE "$kernel" "$work"/dump/*.ptx 2>/dev/null | head -1)"
    if [[ -n "$module" ]]; then
      now="$(stat -c %s "$module")"
      [[ "$now" == "$size" || $running == 0 ]] && break
      size="$now"
    elif [[ $running == 0 ]]; then
      break
    fi
    sleep 0.2
  done
  kill "$dumper" 2>/dev/null
  wait "$dumper" 2>/dev/null
  if [[ -z "$module" ]]; then
    echo "run_foreign.sh: no dumped module matches '$kernel'"; cat "$work/dump.log"; exit 1
  fi
  cp "$module" "$work/edited.ptx"
  for script in "${edits[@]}"; do
    cp "$work/edited.ptx" "$work/before.ptx"
    sed -E -f "$script" "$work/before.ptx" > "$work/edited.ptx" || exit 1
    if cmp -s "$work/before.ptx" "$work/edited.ptx"; then
      echo "run_foreign.sh: the edit $script changed nothing: the PTX this nvcc makes differs from what the test expects"
      exit 1
    fi
    echo "run_foreign.sh: applied $(basename "$script"):"
    diff "$work/before.ptx" "$work/edited.ptx" | head -20
  done
  export KGEN_EMU_PTX="$work/edited.ptx"
fi

"$program" "$@" > "$work/out.log" 2>&1
rc=$?
cat "$work/out.log"
echo "run_foreign.sh: exit status $rc"
if ! grep -qE -- "$expect" "$work/out.log"; then
  echo "run_foreign.sh: FAIL: the output does not match '$expect'"
  exit 1
fi
if [[ -n "$reject" ]] && grep -qE -- "$reject" "$work/out.log"; then
  echo "run_foreign.sh: FAIL: the output matches '$reject'"
  exit 1
fi
if [[ "$status" == ok && $rc -ne 0 ]] || [[ "$status" == fail && $rc -eq 0 ]]; then
  echo "run_foreign.sh: FAIL: exit status $rc, expected $status"
  exit 1
fi
echo "run_foreign.sh: PASS"
