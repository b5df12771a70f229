#!/usr/bin/env bash
# A checked-in tpu kernel with one feature removed must fail `kgen verify` (docs/verification.md).
# Usage: feature_removed.sh KGEN_VERIFY SPEC OUT_DIR SED_EXPRESSION...
# Copies generated/<name>/ to OUT_DIR, applies each sed expression to the kernel (each must
# change it), verifies the copy and succeeds only when the verification reports FAIL (exit 1).
set -uo pipefail
verify=$1 spec=$2 out=$3
shift 3
name=$(basename "$spec" .json)
rm -rf "$out/$name" && mkdir -p "$out" && cp -r "generated/$name" "$out/" || exit 2
kernel="$out/$name/$name.tpu.mlir"
for expression in "$@"; do
  before=$(cksum <"$kernel")
  sed -i "$expression" "$kernel"
  [ "$(cksum <"$kernel")" != "$before" ] || { echo "the edit '$expression' matches nothing in $kernel"; exit 2; }
done
"$verify" "$spec" --target tpu --generated "$out"
status=$?
[ $status = 1 ] && echo "the kernel without the feature fails, as it must" && exit 0
echo "expected kgen verify to fail with status 1, got $status"
exit 1
