#!/usr/bin/env python3
"""Benchmark: kgen.jax on the CPU. For every generated folder with a tpu target (or those
given), the time of `jax.jit(attention)` on random inputs — the first call (tracing, XLA's
compile, the executor's JIT of the kernel, one run of its whole grid) and the median of the
following calls — and, for a backward spec, the same for `jax.jit(jax.grad(loss))` (forward,
dq and dkv kernels). Prints a Markdown table; docs/benchmarks.md records a run.

    PYTHONPATH=python JAX_PLATFORMS=cpu .venv/bin/python bench/jax_cpu_calls.py [--repeats 3] [FOLDER...]

This measures kgen's CPU executor (verify/mosaic: the kernels' MLIR lowered and JIT-compiled
by MLIR 22, the grid steps run one after another on one thread), not a TPU: no kernel here
has run on one.
"""
import argparse
import json
import math
import os
import pathlib
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import kgen.jax  # noqa: E402
from kgen.generated_folder import GeneratedFolder  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def inputs(signature):
  s, dtype = signature.shape, jnp.dtype(signature.dtype)
  keys = jax.random.split(jax.random.key(0), 5)
  tensors = [jax.random.normal(keys[0], (s.batch, s.q_heads, s.q_len, s.head_dim), dtype),
             jax.random.normal(keys[1], (s.batch, s.kv_heads, s.kv_len, s.head_dim), dtype),
             jax.random.normal(keys[2], (s.batch, s.kv_heads, s.kv_len, s.head_dim_v), dtype)]
  extras = {}
  if signature.segment_ids:  # four documents per row
    ids = jnp.repeat(jnp.arange(4, dtype=jnp.int32), s.q_len // 4)[None].repeat(s.batch, 0)
    extras["segment_ids"] = (ids, jnp.repeat(jnp.arange(4, dtype=jnp.int32),
                                             s.kv_len // 4)[None].repeat(s.batch, 0))
  if signature.sinks:
    extras["sinks"] = jax.random.normal(keys[3], (s.q_heads,), jnp.float32)
  return tensors, extras


def grid_steps(call) -> int:
  """Grid steps of one kernel: the product of its plan's grid."""
  path = pathlib.Path(call.kernel_path)
  return math.prod(json.loads(path.with_name(path.name.removesuffix(".mlir") + ".plan.json")
                              .read_text())["grid"])


def timed(function, *args, repeats):
  """(first call, the call of median wall time among `repeats` more), each as "wall (CPU)"
  seconds: CPU time counts every thread of the process, so it also says what a busy shared
  machine did to the wall time."""
  def once():
    wall, cpu = time.perf_counter(), time.process_time()
    jax.block_until_ready(function(*args))
    return time.perf_counter() - wall, time.process_time() - cpu
  first = once()
  rest = sorted(once() for _ in range(repeats))
  steady = rest[len(rest) // 2]
  return tuple(f"{wall:.2f} ({cpu:.2f})" for wall, cpu in (first, steady))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("folders", nargs="*", type=pathlib.Path)
  parser.add_argument("--repeats", type=int, default=3)
  args = parser.parse_args(argv)
  # Forward specs: a decode folder loads as a kgen.jax.Decode, called with a cache and kv_lens.
  folders = args.folders or sorted(f for f in (ROOT / "generated").iterdir()
                                   if GeneratedFolder(f).has("tpu", "kernel") and
                                   not GeneratedFolder(f).is_decode())
  print(f"jax {jax.__version__}, {os.cpu_count()} CPUs; seconds of wall time (of CPU time)",
        file=sys.stderr)
  print("| spec | grid steps (fwd) | forward: first call | forward | grad steps (fwd+dq+dkv) "
        "| grad: first call | grad |")
  print("|---|---|---|---|---|---|---|")
  for folder in folders:
    attention = kgen.jax.load(folder)
    tensors, extras = inputs(attention.signature)
    forward = jax.jit(lambda t, e: attention(*t, **e))
    f_first, f_steady = timed(forward, tensors, extras, repeats=args.repeats)
    row = [folder.name, str(grid_steps(attention.forward)), f_first, f_steady]
    if attention.signature.backward:
      def loss(t, e):
        return jnp.sum(attention(*t, **e).astype(jnp.float32))
      grad = jax.jit(jax.grad(loss))
      g_first, g_steady = timed(grad, tensors, extras, repeats=args.repeats)
      total = sum(grid_steps(c) for c in (attention.forward, attention.dq, attention.dkv))
      row += [str(total), g_first, g_steady]
    else:
      row += ["—", "—", "—"]
    print("| " + " | ".join(row) + " |", flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
