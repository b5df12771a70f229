#!/usr/bin/env python3
"""make verify: kgen.jax's decode across devices (docs/decode.md, "Across devices") exported
for a TPU v5e 2x2 slice and compiled by libtpu, deviceless (docs/tpu-deviceless-compile.md:
a compile-only topology, no TPU attached).

    PYTHONPATH=python .venv-libtpu/bin/python verify/jax_decode_mesh_compile.py [FOLDER...]

For every decode folder whose spec can be sharded (default: the decode folders of generated/
and, with $KGEN_TEST_GENERATED, kgen.jax's decode test specs there; the others are listed with
why not), the program kgen.jax.decode_across_devices.sharded builds (a shard_map
over a 1-D axis of the slice's 4 chips: the generated kernel, and a split spec's nothing else,
on each chip's quarter of the cache, then pmax and psum) is exported with
jax.export(platforms=["tpu"]) and the export compiled by XLA:TPU for the 4 chips, whose
Mosaic compiler compiles the kernel. Prints per spec what the export holds (tpu_custom_calls)
and what the compiled program holds (all-reduces, code size). Exit 0 when every compile
succeeds, 1 when one fails, 77 when libtpu is not installed. The check of the compiled program
is itself checked: the first spec compiled again with a merge that has no collective (planted)
must fail it.
"""
import json
import os
import pathlib
import re
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests/mosaic_dialect"))
sys.path.insert(0, str(ROOT / "tests/python"))
import tpu_deviceless_compile  # noqa: E402  pylint: disable=wrong-import-position

TOPOLOGY = "v5e:2x2"
AXIS = "kv"


def merge_on_this_device_only(out_s, lse_s, sinks, axis_name):
  """Planted: a merge of each device's own parts with no collective, which the check of the
  compiled program (an all-reduce each for the pmax and the psum) must catch."""
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  del axis_name
  m = jnp.max(lse_s, axis=0) if sinks is None else jnp.maximum(jnp.max(lse_s, axis=0), sinks)
  weights = jnp.exp(lse_s - m)
  total = jnp.sum(weights, axis=0) + (0.0 if sinks is None else jnp.exp(sinks - m))
  return jnp.sum(weights[..., None] * out_s, axis=0) / total[..., None], m + jnp.log(total)


def compile_sharded(decode, mesh):
  """Exports decode_across_devices.sharded for `mesh` and compiles the export; returns
  (tpu_custom_calls in the export, devices it was exported for, all-reduces in the compiled
  program, bytes of code)."""
  # pylint: disable=import-outside-toplevel
  import jax
  from jax.sharding import NamedSharding, PartitionSpec

  from kgen.jax import decode_across_devices
  import jax_export_test

  args = jax_export_test.decode_arguments(decode, devices=mesh.size)
  function = decode_across_devices.sharded(decode, mesh, AXIS, return_lse=decode.signature.lse)
  shardings = tuple(None if a is None else NamedSharding(mesh, spec) for a, spec in zip(
      args, decode_across_devices.partition_specs(decode, AXIS)))
  exported = jax.export.export(jax.jit(function, in_shardings=shardings),
                               platforms=["tpu"])(*args)
  kernels = sum(target == "tpu_custom_call"
                for target, _ in jax_export_test.custom_calls(exported))
  compiled = jax.jit(exported.call, in_shardings=shardings,
                     out_shardings=NamedSharding(mesh, PartitionSpec())).lower(*args).compile()
  # One all-reduce per collective: the pmax of the parts' lse, and the psum of the weighted
  # outs and the weights (one all-reduce of two operands).
  all_reduces = len(re.findall(r" all-reduce(?:-start)?\(", compiled.as_text()))
  return (kernels, exported.nr_devices, all_reduces,
          compiled.memory_analysis().generated_code_size_in_bytes)


def holds_the_merge(kernels: int, all_reduces: int) -> bool:
  """The decode kernel alone (a split spec's combine is the merge's to replace), and the
  merge's two collectives."""
  return kernels == 1 and all_reduces >= 2


def main(argv) -> int:
  if not tpu_deviceless_compile.have_libtpu():
    print(f"jax_decode_mesh_compile: SKIP: libtpu is not installed in {sys.executable}'s "
          "environment (make verify installs .venv-libtpu)", file=sys.stderr)
    return tpu_deviceless_compile.SKIP
  # pylint: disable=import-outside-toplevel
  from unittest import mock

  import jax
  import libtpu
  import numpy as np
  from jax.experimental import topologies
  from jax.sharding import Mesh

  import kgen.jax
  from kgen.jax import decode_across_devices
  import jax_export_test

  print(f"jax {jax.__version__}, libtpu {libtpu.__version__}", flush=True)
  topology = topologies.get_topology_desc(
      platform="tpu", topology_name=TOPOLOGY, chips_per_host_bounds=(2, 2, 1), num_slices=1,
      wrap=(False, False, False))
  devices = topology.devices
  mesh = Mesh(np.array(devices), (AXIS,))
  print(f"{TOPOLOGY}: {len(devices)} compile-only {devices[0].device_kind} devices, mesh axis "
        f"{AXIS!r}", flush=True)
  folders = [pathlib.Path(f) for f in argv] or jax_export_test.tpu_folders(decode=True)
  if not argv and os.environ.get("KGEN_TEST_GENERATED"):
    folders += sorted(pathlib.Path(os.environ["KGEN_TEST_GENERATED"]).glob("jax_decode_*"))
  compiled, failed = [], 0
  for folder in folders:
    decode = kgen.jax.load(folder)
    why = decode_across_devices.refusal(decode)
    if why:
      print(f"{folder.name}: not sharded: {why}", flush=True)
      continue
    generation = json.loads((ROOT / decode.folder.spec).read_text())["targets"]["tpu"]["generation"]
    start = time.time()
    try:
      kernels, exported_devices, all_reduces, code = compile_sharded(decode, mesh)
    except Exception as e:  # pylint: disable=broad-except
      print(f"{folder.name}: COMPILE FAILED for {TOPOLOGY}: {type(e).__name__}: {e}",
            file=sys.stderr)
      failed += 1
      continue
    print(f"{folder.name} (kernel for {generation}): exported for {exported_devices} devices "
          f"with {kernels} tpu_custom_call(s); compiled for {TOPOLOGY} in "
          f"{time.time() - start:.2f} s: {all_reduces} all-reduce(s), {code} bytes of code",
          flush=True)
    if not holds_the_merge(kernels, all_reduces):
      print(f"{folder.name}: FAIL: expected the decode kernel alone in the export and an "
            "all-reduce each for the pmax and the psum", file=sys.stderr)
      failed += 1
    compiled.append(decode)
  if not compiled:
    print("jax_decode_mesh_compile: FAIL: no decode spec could be sharded", file=sys.stderr)
    return 1
  # The check above, planted: the first spec again with a merge that has no collective.
  with mock.patch.object(decode_across_devices, "merge_partials", merge_on_this_device_only):
    kernels, _, all_reduces, _ = compile_sharded(compiled[0], mesh)
  if holds_the_merge(kernels, all_reduces):
    print(f"jax_decode_mesh_compile: FAIL: a merge with no collective ({compiled[0].folder.name}) "
          f"passed the check ({all_reduces} all-reduces)", file=sys.stderr)
    failed += 1
  else:
    print(f"planted: {compiled[0].folder.name} merged on each device alone: caught "
          f"({all_reduces} all-reduces)", flush=True)
  if failed:
    print(f"jax_decode_mesh_compile: FAIL: {failed} spec(s)", file=sys.stderr)
    return 1
  print(f"jax_decode_mesh_compile: OK ({len(compiled)} spec(s) compiled for {TOPOLOGY})")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
