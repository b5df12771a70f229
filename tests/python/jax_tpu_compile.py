#!/usr/bin/env python3
"""make verify: kgen.jax's TPU exports compiled by libtpu for each spec's TPU generation,
deviceless (docs/tpu-deviceless-compile.md: a compile-only topology, no TPU attached).

    PYTHONPATH=python .venv-libtpu/bin/python tests/python/jax_tpu_compile.py [FOLDER...]

For every generated folder with a tpu target (default: all of generated/), the forward of
`kgen.jax.load(folder)` and, for a backward spec, jax.grad of a loss through it are exported
with jax.export(platforms=["tpu"]) (as jax_export_test.py does in make test), and each
exported module is compiled by XLA:TPU, whose Mosaic compiler compiles every kernel in it.
Exit 0 when every compile succeeds, 1 when one fails, 77 when libtpu is not installed.
"""
import os
import pathlib
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests/mosaic_dialect"))
import tpu_deviceless_compile  # noqa: E402  pylint: disable=wrong-import-position


def main(argv) -> int:
  if not tpu_deviceless_compile.have_libtpu():
    print(f"jax_tpu_compile: SKIP: libtpu is not installed in {sys.executable}'s environment "
          "(make verify installs .venv-libtpu)", file=sys.stderr)
    return tpu_deviceless_compile.SKIP
  import json  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  import libtpu  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  from jax.sharding import Mesh, NamedSharding, PartitionSpec  # pylint: disable=import-outside-toplevel

  import kgen.jax  # pylint: disable=import-outside-toplevel
  import jax_export_test  # pylint: disable=import-outside-toplevel

  print(f"jax {jax.__version__}, libtpu {libtpu.__version__}", flush=True)
  folders = [pathlib.Path(f) for f in argv] or jax_export_test.tpu_folders()
  failed = 0
  for folder in folders:
    attention = kgen.jax.load(folder)
    spec = json.loads((ROOT / attention.folder.spec).read_text())
    generation = spec["targets"]["tpu"]["generation"]
    # libtpu names v7 tpu7x (as verify/write_receipts.sh maps it).
    device = tpu_deviceless_compile.compile_only_device(
        f"{ {'v7': 'tpu7x'}.get(generation, generation) }:1x1x1")
    placed = NamedSharding(Mesh(np.array([device]), ("x",)), PartitionSpec())
    tensors, extras = jax_export_test.arguments(attention.signature)
    for what, function, kernels in jax_export_test.exported_functions(attention):
      start = time.time()
      try:
        exported = jax.export.export(jax.jit(function), platforms=["tpu"])(tensors, extras)
        compiled = jax.jit(exported.call, in_shardings=placed, out_shardings=placed).lower(
            tensors, extras).compile()
      except Exception as e:  # pylint: disable=broad-except
        print(f"{folder.name} {what} ({generation}): COMPILE FAILED: {type(e).__name__}: {e}",
              file=sys.stderr)
        failed += 1
        continue
      code = compiled.memory_analysis().generated_code_size_in_bytes
      print(f"{folder.name} {what} ({generation}, {device.device_kind}): {kernels} Mosaic "
            f"kernel(s) compiled in {time.time() - start:.2f} s, {code} bytes of code", flush=True)
  if failed:
    print(f"jax_tpu_compile: FAIL: {failed} compile(s) failed", file=sys.stderr)
    return 1
  print(f"jax_tpu_compile: OK ({len(folders)} specs)")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
