#!/usr/bin/env bash
# The sm90a GPU harnesses on a machine with an H100/H200 (the device tool), in two halves:
#
#   verify/cuda/run_on_gpu.sh pack [BUILD]   here, after `make cuda`: strip every harness
#                                            (BUILD/verify/cuda/sm90a_run_*, and the
#                                            backward's sm90a_backward_run_*) into .sm90a-gpu/
#   verify/cuda/run_on_gpu.sh run [ARGS...]  there, from the repository root with .sm90a-gpu
#                                            carried: run each harness against its spec
#                                            (specs/ or tests/cuda/specs/) with ARGS (e.g.
#                                            --bench 20); when $OUT is set, the log goes to
#                                            $OUT/sm90a-gpu.log and each run's facts to
#                                            $OUT/gpu-runs/<name>.json (back here, record them:
#                                            verify/write_receipts.sh --gpu-runs DIR/gpu-runs;
#                                            a backward's <name>.backward.json is not a receipt
#                                            yet, only a log).
#                                            Exit status 1 if any fails.
#
# .sm90a-gpu/ is git-ignored (.gitignore), so it can travel as a carried path.
set -euo pipefail
cd "$(dirname "$0")/../.."
pack_dir=.sm90a-gpu

case "${1:-}" in
  pack)
    build=${2:-build}
    shopt -s nullglob
    harnesses=("$build"/verify/cuda/sm90a_run_* "$build"/verify/cuda/sm90a_backward_run_*)
    ((${#harnesses[@]})) || { echo "no harness under $build/verify/cuda: run make cuda first" >&2; exit 1; }
    rm -rf "$pack_dir" && mkdir -p "$pack_dir"
    for harness in "${harnesses[@]}"; do
      name=${harness##*/sm90a_run_}
      name=${name##*/sm90a_backward_run_}
      # The benchmark specs' harnesses travel with bench/sm90a_vs_torch.sh instead.
      [ -f "specs/$name.json" ] || [ -f "tests/cuda/specs/$name.json" ] || continue
      strip -o "$pack_dir/$(basename "$harness")" "$harness"
    done
    du -sh "$pack_dir"
    ;;
  run)
    shift
    log=${OUT:+$OUT/sm90a-gpu.log}
    log=${log:-/dev/null}
    status=0
    for harness in "$pack_dir"/sm90a_run_* "$pack_dir"/sm90a_backward_run_*; do
      [ -e "$harness" ] || continue
      name=${harness##*/sm90a_run_}
      name=${name##*/sm90a_backward_run_}
      run=$name
      [[ $harness == */sm90a_backward_run_* ]] && run=$name.backward
      spec=specs/$name.json
      [ -f "$spec" ] || spec=tests/cuda/specs/$name.json
      echo "== $run ($spec)" | tee -a "$log"
      receipt=()
      if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT/gpu-runs"
        receipt=(--receipt "$OUT/gpu-runs/$run.json")
      fi
      if ! "$harness" "$spec" "$@" "${receipt[@]}" 2>&1 | tee -a "$log"; then status=1; fi
    done
    exit $status
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
