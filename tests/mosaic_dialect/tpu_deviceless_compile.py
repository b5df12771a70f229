#!/usr/bin/env python3
"""Compile a Mosaic module for a TPU with libtpu, on a host that has no TPU.

    tpu_deviceless_compile.py MODULE.mlir --operands OPERANDS.json
        [--target v5e] [--target v6e ...] [--topology NAME ...]
        [--vmem-limit-bytes N] [--no-checks] [--report FILE]

Needs a Python where `libtpu` is installed next to the pinned jax/jaxlib (for jax
0.10.2: `pip install 'jax[tpu]==0.10.2'`, which brings libtpu 0.0.42.1). libtpu is NOT
in kgen's requirements; see docs/tpu-deviceless-compile.md. Without libtpu the script
prints why and exits 77 (ctest's skip status).

Steps:
  1. unless --no-checks, every stage of check_real_mosaic.py (real dialect parse and
     verify, the OPERANDS.json contract, jax.export, custom-call decode);
  2. for each target, a compile-only TPU device from
     jax.experimental.topologies.get_topology_desc (libtpu's PJRT plugin describes the
     chip; nothing is attached);
  3. jax.jit(f) of a function calling the kernel (as_tpu_kernel), with every operand
     and result placed on that device, .lower(ShapeDtypeStructs).compile(): XLA:TPU
     compiles the program and libtpu's Mosaic compiler runs its passes on the kernel
     (canonicalization, layout inference and application, lowering to the chip), so
     unsupported ops, types and layouts and scoped-VMEM overflows are reported here.

Targets are single-chip topologies: v4, v5e, v5p, v6e, tpu7x ("<target>:1x1x1" with
one chip per host); --topology takes any topology name libtpu knows (e.g. "v5e:2x2")
with chips_per_host_bounds 1x1x1. Exit 0 when every compile succeeds, 1 when a check
or a compile fails (the libtpu/Mosaic error is printed), 2 on a usage error. --report
writes the outcome as JSON for the kernel's receipt (docs/receipts.md): versions, and per
topology the device kind and code size or the error; no times.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Off a Cloud TPU VM there is no metadata server to ask for the accelerator type.
os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
# Compile-only topologies open no TPU, so the lock libtpu takes against a second process
# using the same chips protects nothing here; without this, two compiles at once (make verify
# beside a benchmark) fail with "Internal error when accessing libtpu multi-process lockfile".
os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = ("v4", "v5e", "v5p", "v6e", "tpu7x")
SKIP = 77


def have_libtpu() -> bool:
  return importlib.util.find_spec("libtpu") is not None


def compile_only_device(topology_name: str):
  """The first device of a compile-only topology (no TPU needed)."""
  from jax.experimental import topologies  # pylint: disable=import-outside-toplevel
  topo = topologies.get_topology_desc(
      platform="tpu", topology_name=topology_name, chips_per_host_bounds=(1, 1, 1),
      num_slices=1, wrap=(False, False, False))
  return topo.devices[0]


def kernel_callable(module_path: str, spec, vmem_limit_bytes: int | None):
  """as_tpu_kernel on the parsed module; returns (callable, argument structs)."""
  sys.path.insert(0, HERE)
  import check_real_mosaic as crm  # pylint: disable=import-outside-toplevel
  from jax.experimental import mosaic  # pylint: disable=import-outside-toplevel
  from jaxlib.mlir import ir  # pylint: disable=import-outside-toplevel

  with crm.make_context(), ir.Location.unknown():
    module = ir.Module.parseFile(module_path)
    kernel_name = next(crm.func_name(op.operation) for op in module.body.operations
                       if op.operation.name == "func.func" and
                       "iteration_bounds" in op.operation.attributes)
    kernel = mosaic.as_tpu_kernel(
        module, tuple(crm._sds(o) for o in spec.outputs),  # pylint: disable=protected-access
        kernel_name=kernel_name, vmem_limit_bytes=vmem_limit_bytes)
  args = [crm._sds(o) for o in spec.scalar_prefetch + spec.inputs]  # pylint: disable=protected-access
  return kernel, args


def compile_for(device, kernel, args):
  """Lowers and compiles jit(kernel) for `device`; returns the Compiled object."""
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  from jax.sharding import Mesh, NamedSharding, PartitionSpec  # pylint: disable=import-outside-toplevel
  placed = NamedSharding(Mesh(np.array([device]), ("x",)), PartitionSpec())

  def f(*a):
    return kernel(*a)

  return jax.jit(f, in_shardings=(placed,) * len(args),
                 out_shardings=placed).lower(*args).compile()


def write_report(path: str, versions: dict, compiles: list, errors: list) -> None:
  report = {"compiler": "libtpu's Mosaic compiler and XLA:TPU, deviceless: a compile-only "
                        "topology, no TPU attached (tests/mosaic_dialect/tpu_deviceless_compile.py)",
            **versions, "compiles": compiles, "errors": errors,
            "passed": not errors and all("error" not in c for c in compiles)}
  with open(path, "w", encoding="utf-8") as f:
    json.dump(report, f, indent=2)
    f.write("\n")


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("module")
  parser.add_argument("--operands", required=True)
  parser.add_argument("--target", action="append", choices=TARGETS,
                      help="TPU generation (repeatable; default v5e)")
  parser.add_argument("--topology", action="append", default=[],
                      help="a libtpu topology name such as v5e:2x2 (repeatable)")
  parser.add_argument("--vmem-limit-bytes", type=int,
                      help="scoped VMEM limit passed to as_tpu_kernel")
  parser.add_argument("--no-checks", action="store_true",
                      help="skip check_real_mosaic.py's stages")
  parser.add_argument("--report", help="write the outcome as JSON here (for receipts)")
  args = parser.parse_args(argv)
  if not have_libtpu():
    print("tpu_deviceless_compile: SKIP: libtpu is not installed in "
          f"{sys.executable}'s environment (pip install 'jax[tpu]==<pinned jax>' into "
          "a separate venv; see docs/tpu-deviceless-compile.md)", file=sys.stderr)
    return SKIP

  sys.path.insert(0, HERE)
  import check_real_mosaic as crm  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  import jaxlib  # pylint: disable=import-outside-toplevel
  import libtpu  # pylint: disable=import-outside-toplevel
  versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
              "libtpu": libtpu.__version__}
  print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, libtpu "
        f"{libtpu.__version__}", flush=True)
  try:
    spec = crm.load_operands(args.operands)
    if not args.no_checks:
      errors = crm.check(args.module, args.operands,
                         lambda m: print("  " + m.split("\n")[0], flush=True))
      if errors:
        print(f"tpu_deviceless_compile: FAIL {args.module}: check_real_mosaic stages",
              file=sys.stderr)
        for e in errors:
          print(e, file=sys.stderr)
        if args.report:
          write_report(args.report, versions, [], errors)
        return 1
  except crm.UsageError as e:
    print(f"tpu_deviceless_compile: usage error: {e}", file=sys.stderr)
    return 2

  topologies = [f"{t}:1x1x1" for t in (args.target or ([] if args.topology else
                                                        ["v5e"]))] + args.topology
  kernel, call_args = kernel_callable(args.module, spec, args.vmem_limit_bytes)
  failed = 0
  compiles = []
  for name in topologies:
    start = time.time()
    try:
      device = compile_only_device(name)
    except Exception as e:  # pylint: disable=broad-except
      print(f"{name}: no compile-only topology: {type(e).__name__}: {e}",
            file=sys.stderr)
      compiles.append({"topology": name, "error": f"no compile-only topology: {e}"})
      failed += 1
      continue
    try:
      compiled = compile_for(device, kernel, call_args)
    except Exception as e:  # pylint: disable=broad-except
      print(f"{name} ({device.device_kind}): COMPILE FAILED: {type(e).__name__}: {e}",
            file=sys.stderr)
      compiles.append({"topology": name, "device_kind": device.device_kind,
                       "error": f"{type(e).__name__}: {str(e).splitlines()[0]}"})
      failed += 1
      continue
    mem = compiled.memory_analysis()
    compiles.append({"topology": name, "device_kind": device.device_kind,
                     "code_bytes": mem.generated_code_size_in_bytes,
                     "argument_bytes": mem.argument_size_in_bytes,
                     "output_bytes": mem.output_size_in_bytes})
    print(f"{name} ({device.device_kind}): compiled in {time.time() - start:.2f} s, "
          f"{mem.generated_code_size_in_bytes} bytes of code, arguments "
          f"{mem.argument_size_in_bytes} B, outputs {mem.output_size_in_bytes} B",
          flush=True)
  if args.report:
    write_report(args.report, versions, compiles, [])
  if failed:
    print(f"tpu_deviceless_compile: FAIL {args.module}: {failed} of "
          f"{len(topologies)} compiles failed", file=sys.stderr)
    return 1
  print(f"tpu_deviceless_compile: OK {args.module} ({len(topologies)} compiles)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
