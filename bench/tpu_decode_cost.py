#!/usr/bin/env python3
"""Static cost of kgen's tpu decode kernel against JAX's paged_attention and ragged paged
attention (RPA), by libtpu's bundle listings: the modeled share of HBM bandwidth.

    .venv-libtpu/bin/python bench/tpu_decode_cost.py [--kgen build/generator/kgen]
        [--generations v5e v6e] [--block-kv 2048] [--page-size 128] [--json FILE] [--keep-dumps DIR]

Llama-3-8B-like decode (q heads 32, kv heads 8, head_dim 128, bfloat16, one new token, pages
of 128 positions) at batch 1, 8, 64 and 8k, 32k, 128k positions, every sequence at the full
length. Each kernel is compiled once per generation, deviceless (a compile-only TPU device, as
bench/tpu_static_cost.py does), with the same KV bytes per block: kgen's block_kv positions of
one kv head's k and v; paged_attention's pages_per_compute_block = block_kv / page_size; RPA's
num_kv_pages_per_block pages of all 16 combined kv heads, of equal bytes. From each listing:

  - bundles per kv block on the steady path. kgen: the block loop of a variant of its kernel
    whose two per-block conditions (a next block to prefetch, a block needing no mask) are
    constants, so the loop body is exactly that path. JAX: their kv loop's whole body, an upper
    bound (its branches are not decided here);
  - DMAs per block (dma.hbm_to_vmem instructions on that path; one per page per k and v is the
    floor of a paged cache), spills (vector and scalar spill loads and stores) per block;
  - per-program bundles: the grid loop's body outside the kv loop (q in, init, out, first
    copies), paid once per (sequence, kv head) for kgen and paged_attention, per grid step of
    RPA.

The model, per shape: bytes that must be read = batch x length x kv heads x (d + dv) x 2;
kernel bundles = programs x per-program + blocks x per-block; modeled time = max(bytes / HBM
bandwidth, bundles / clock) (docs/benchmarks.md), share = (bytes / bandwidth) / modeled time.
A second, pipelined figure charges the first block's copy in full (nothing to overlap it with),
each program its bundles outside the kv loop, and each block the larger of its copy and its
compute (each kernel here starts the next program's first block during the current one's last);
a third, the same with each copy taking 500 ns to start (an assumed order of HBM's latency, not
a measured figure) before its bytes flow, which two blocks in flight do not hide. Bandwidth: v5e
819 GB/s, v6e 1,638 GB/s (Cloud TPU pages); clocks as bench/tpu_static_cost.py derives them
(v5e 1.503 GHz; v6e's 3.5 GHz is suspect, docs/tpu-static-cost.md). Nothing runs on a TPU.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "mosaic_dialect"))

HBM_BYTES_PER_S = {"v5e": 819e9, "v6e": 1638e9}
# A copy's start before its bytes flow (HBM's access latency; an assumption of its order, not a
# measured figure). Each kernel here keeps two blocks in flight, so a block whose bytes arrive
# sooner than this still waits for it.
DMA_START_S = 500e-9
Q_HEADS, KV_HEADS, HEAD_DIM, ELEMENT_BYTES = 32, 8, 128, 2
BATCHES = (1, 8, 64)
LENGTHS = (8192, 32768, 131072)
# The compiled shape (the per-block and per-program counts do not depend on it).
COMPILE_BATCH, COMPILE_LENGTH = 8, 8192


def quiet_env(dump: str) -> None:
  os.environ["LIBTPU_INIT_ARGS"] = (os.environ.get("LIBTPU_INIT_ARGS", "") +
                                    f" --xla_jf_dump_to={dump} --xla_jf_dump_llo_text=true"
                                    " --xla_jf_dump_llo_static_gaps=true")
  os.environ.setdefault("JAX_PLATFORMS", "cpu")
  os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
  os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")


def loops(listing):
  """(start, back-branch addr) of every loop, outermost first."""
  import tpu_static_cost as t  # pylint: disable=import-outside-toplevel
  found = [(listing.target_addr(r), a) for a, (r, _, _) in listing.branches.items() if listing.target_addr(r) <= a]
  return sorted(found, key=lambda x: (x[0], -x[1])), t.DELAY_SLOTS


def span_cost(listing, start: int, stop: int) -> dict:
  """Bundles, spills and DMA instructions of the static span [start, stop]."""
  bundles = listing.bundles[start:stop + 1]
  return {"bundles": len(bundles),
          "spills": sum(b["spill_ld"] + b["spill_st"] for b in bundles),  # vector and scalar
          # The DMA instructions themselves, not the bounds checks that name them in comments.
          "dmas": sum(1 for b in bundles for s in b["insts"] if re.match(r"%\S+ = dma\.hbm_to_vmem", s))}


def block_and_program(listing) -> dict:
  """The innermost kv loop's body (per block) and the grid loop's body outside it (per program)."""
  found, delay = loops(listing)
  grid_start, grid_stop = found[0]
  inner = [l for l in found[1:] if l[0] >= grid_start and l[1] <= grid_stop]
  # The kv block loop: the inner loop holding the MXU work (the longest one).
  start, stop = max(inner, key=lambda l: l[1] - l[0])
  block = span_cost(listing, start, stop + delay)
  whole = span_cost(listing, grid_start, grid_stop + delay)
  return {"block": block, "program": {k: whole[k] - block[k] for k in whole}}


def compile_listing(device, fn, args, dump: str):
  import tpu_static_cost as t  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  before = set(glob.glob(os.path.join(dump, "*")))
  with jax.default_device(device):
    t.compile_on(device, fn, args)
  path, util = t.find_kernel_listing(dump, before)
  return t.Listing(path, util)


# ---------------------------------------------------------------------------------------
# kgen


def kgen_spec(generation: str, block_kv: int, page_size: int) -> dict:
  return {"name": "decode_bench", "kind": "attention_decode", "dtype": "bfloat16",
          "shape": {"batch": COMPILE_BATCH, "q_heads": Q_HEADS, "kv_heads": KV_HEADS, "q_len": 1,
                    "kv_len": COMPILE_LENGTH, "head_dim": HEAD_DIM},
          "paged": {"page_size": page_size},
          "targets": {"tpu": {"generation": generation, "block_kv": block_kv, "splits": 1}}}


# The per-block conditions of the generated kernel (templates/tpu/decode/kernel.mlir.tmpl),
# made constants in the measured variant (a block needing no mask: causal, or inside a window).
STEADY = {r"%more = arith\.cmpi slt, %step_next, %blocks : i32": "%more = arith.constant true",
          r"%full = arith\.(?:cmpi sle, %block_last, %first_token : i32|andi %before_tokens, %in_windows : i1)":
              "%full = arith.constant true"}
# A program after the first on one TensorCore: its first block was started by the one before.
LATER_PROGRAM = {r"%own_first = arith\.andi %any_block, %not_prefetched : i1": "%own_first = arith.constant false",
                 r"%first_program = arith\.cmpi eq, %program_bgs?, %c0_i32 : i32": "%first_program = arith.constant false"}


def variant(text: str, constants: dict, path: str) -> str:
  """`text` with each condition of `constants` replaced by its constant, written to `path`."""
  for pattern, constant in constants.items():
    text, n = re.subn(pattern, constant, text)
    if n != 1:
      raise RuntimeError(f"the kernel has {n} lines matching {pattern!r}; the template changed?")
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return path


def kernel_costs(module: str, block_kv: int, page_size: int, compile_fn, work: str) -> dict:
  """Per kv block and per program of kgen's decode kernel `module` (a <name>.tpu.mlir beside
  its operands file), from the listings of two variants of it written under `work`;
  compile_fn(callable, args) compiles one and returns its Listing."""
  import check_real_mosaic as crm  # pylint: disable=import-outside-toplevel
  import tpu_deviceless_compile as tdc  # pylint: disable=import-outside-toplevel
  text = open(module, encoding="utf-8").read()
  operands = crm.load_operands(module.replace(".mlir", ".operands.json"))
  stem = os.path.join(work, os.path.basename(module).replace(".tpu.mlir", ""))

  def listing_of(path):
    kernel, args = tdc.kernel_callable(path, operands, None)
    return compile_fn(lambda *a: kernel(*a), args)

  steady = listing_of(variant(text, STEADY, stem + "_steady.tpu.mlir"))
  costs = {"block": block_and_program(steady)["block"], "mxus": steady.capacity.get("MXU")}
  # Per program: the grid loop outside the block loop of a program after the first (the last
  # block issues the next program's copies instead of a next block's: in the block loop).
  later = listing_of(variant(text, LATER_PROGRAM, stem + "_later.tpu.mlir"))
  costs["program"] = block_and_program(later)["program"]
  costs["dmas_per_page"] = costs["block"]["dmas"] / (2 * max(1, block_kv // page_size))
  return costs


def kgen_costs(kgen: str, generation: str, block_kv: int, page_size: int, device, dump: str, work: str) -> dict:
  spec_path = os.path.join(work, f"decode_bench_{generation}.json")
  with open(spec_path, "w", encoding="utf-8") as f:
    json.dump(kgen_spec(generation, block_kv, page_size), f)
  subprocess.run([kgen, "gen", spec_path, "--out", work], check=True, capture_output=True)
  return kernel_costs(os.path.join(work, "decode_bench", "decode_bench.tpu.mlir"), block_kv, page_size,
                      lambda fn, args: compile_listing(device, fn, args, dump), work)


def clock_hz(generation: str, mxus: int) -> float:
  """The clock bench/tpu_static_cost.py derives from the generation's peak and its MXUs."""
  import tpu_static_cost as t  # pylint: disable=import-outside-toplevel
  g = t.GENERATIONS[generation]
  return g["peak_flops"] / (mxus * g["mxu_width"] ** 2 * 2)


def pipelined_cycles(costs: dict, block_bytes: float, bytes_per_cycle: float, start_cycles: float, programs: int,
                     blocks: int) -> float:
  """One kernel run on one TensorCore, in cycles: the first block's copy exposed, each program's
  bundles outside the block loop, each block the larger of its copy (its start, then its bytes)
  and its bundles (the kernel starts each program's first block during the program before's
  last)."""
  copy = start_cycles + block_bytes / bytes_per_cycle
  return (copy + programs * costs["program"]["bundles"] +
          blocks * max(copy, costs["block"]["bundles"]))


# ---------------------------------------------------------------------------------------
# JAX


def paged_attention_costs(generation: str, block_kv: int, page_size: int, device, dump: str) -> dict:
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention_kernel as pak  # pylint: disable=import-outside-toplevel
  pages = COMPILE_BATCH * COMPILE_LENGTH // page_size
  ppcb = block_kv // page_size
  args = [jax.ShapeDtypeStruct((COMPILE_BATCH, Q_HEADS, HEAD_DIM), jnp.bfloat16),
          jax.ShapeDtypeStruct((KV_HEADS, pages, page_size, HEAD_DIM), jnp.bfloat16),
          jax.ShapeDtypeStruct((KV_HEADS, pages, page_size, HEAD_DIM), jnp.bfloat16),
          jax.ShapeDtypeStruct((COMPILE_BATCH,), jnp.int32),
          jax.ShapeDtypeStruct((COMPILE_BATCH, COMPILE_LENGTH // page_size), jnp.int32)]

  def fn(q, k, v, lengths, page_indices):
    return pak.paged_attention(q, k, v, lengths, page_indices, pages_per_compute_block=ppcb)

  costs = block_and_program(compile_listing(device, fn, args, dump))
  costs["dmas_per_page"] = costs["block"]["dmas"] / (2 * ppcb)
  return costs


def rpa_costs(generation: str, block_kv: int, page_size: int, device, dump: str) -> dict:
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  from jax.experimental.pallas.ops.tpu.ragged_paged_attention import kernel as rk  # pylint: disable=import-outside-toplevel
  # Equal bytes per block: RPA's block holds pages of all 2 x kv heads combined.
  pages_per_block = max(1, block_kv // (page_size * KV_HEADS))
  pages = COMPILE_BATCH * COMPILE_LENGTH // page_size
  args = [jax.ShapeDtypeStruct((COMPILE_BATCH, Q_HEADS, HEAD_DIM), jnp.bfloat16),
          jax.ShapeDtypeStruct((pages, page_size, 2 * KV_HEADS, HEAD_DIM), jnp.bfloat16),
          jax.ShapeDtypeStruct((COMPILE_BATCH,), jnp.int32),
          jax.ShapeDtypeStruct((COMPILE_BATCH, COMPILE_LENGTH // page_size), jnp.int32),
          jax.ShapeDtypeStruct((COMPILE_BATCH + 1,), jnp.int32),
          jax.ShapeDtypeStruct((1,), jnp.int32)]

  def fn(q, kv, lengths, page_indices, cu_q_lens, num_seqs):
    return rk.ragged_paged_attention(q, kv, lengths, page_indices, cu_q_lens, num_seqs,
                                     num_kv_pages_per_block=pages_per_block, num_queries_per_block=8,
                                     sm_scale=HEAD_DIM ** -0.5)

  costs = block_and_program(compile_listing(device, fn, args, dump))
  costs["pages_per_block"] = pages_per_block
  costs["dmas_per_page"] = costs["block"]["dmas"] / pages_per_block  # k and v of a page are one copy
  return costs


# ---------------------------------------------------------------------------------------
# The model


def modeled(costs: dict, kernel: str, generation: str, clock: float, batch: int, length: int, block_kv: int) -> dict:
  bandwidth = HBM_BYTES_PER_S[generation]
  kv_bytes = batch * length * KV_HEADS * 2 * HEAD_DIM * ELEMENT_BYTES
  if kernel == "rpa":  # a block holds every kv head; one program per 8 sequences' grid step
    blocks_per_seq = length * KV_HEADS // block_kv
    programs = -(-batch // 8)
    blocks = batch * blocks_per_seq
  else:
    blocks_per_seq = length // block_kv
    programs = batch * KV_HEADS
    blocks = programs * blocks_per_seq
  per_block, per_program = costs["block"]["bundles"], costs["program"]["bundles"]
  bundles = programs * per_program + blocks * per_block
  must_read = kv_bytes / bandwidth
  simple = max(must_read, bundles / clock)
  # Every kernel here starts the next program's (or sequence's) first block during the current
  # one's last: only the very first copy is exposed; the rest overlap compute block by block.
  block_bytes = block_kv * 2 * HEAD_DIM * ELEMENT_BYTES
  pipelined = pipelined_cycles(costs, block_bytes, bandwidth / clock, 0, programs, blocks) / clock
  started = pipelined_cycles(costs, block_bytes, bandwidth / clock, DMA_START_S * clock, programs, blocks) / clock
  return {"batch": batch, "length": length, "bytes": kv_bytes, "bundles": bundles,
          "share": must_read / simple, "share_pipelined": must_read / pipelined,
          "share_started": must_read / started}


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--kgen", default=os.environ.get("KGEN", os.path.join(ROOT, "build", "generator", "kgen")))
  ap.add_argument("--generations", nargs="+", default=["v5e", "v6e"])
  ap.add_argument("--block-kv", type=int, default=2048)
  ap.add_argument("--page-size", type=int, default=128)
  ap.add_argument("--json")
  ap.add_argument("--keep-dumps")
  args = ap.parse_args(argv)
  dump = args.keep_dumps or tempfile.mkdtemp(prefix="tpu_decode_cost_")
  quiet_env(os.path.join(dump, "jf"))
  import tpu_static_cost as t  # pylint: disable=import-outside-toplevel
  import jax  # pylint: disable=import-outside-toplevel
  import libtpu  # pylint: disable=import-outside-toplevel

  results = []
  with tempfile.TemporaryDirectory() as work:
    for generation in args.generations:
      device = t.compile_only_device(t.GENERATIONS[generation]["topology"])
      kernels = {
          "kgen": kgen_costs(args.kgen, generation, args.block_kv, args.page_size, device, os.path.join(dump, "jf"), work),
          "paged_attention": paged_attention_costs(generation, args.block_kv, args.page_size, device, os.path.join(dump, "jf")),
          "rpa": rpa_costs(generation, args.block_kv, args.page_size, device, os.path.join(dump, "jf")),
      }
      clock = clock_hz(generation, kernels["kgen"]["mxus"])
      budget = args.block_kv * 2 * HEAD_DIM * ELEMENT_BYTES / HBM_BYTES_PER_S[generation] * clock
      for name, costs in kernels.items():
        row = {"generation": generation, "kernel": name, "clock_hz": clock, "block_budget_bundles": budget,
               "per_block": costs["block"], "per_program": costs["program"], "dmas_per_page": costs["dmas_per_page"],
               "steady_path": "exact" if name == "kgen" else "upper bound (whole loop body)",
               "shapes": [modeled(costs, name, generation, clock, b, n, args.block_kv) for b in BATCHES for n in LENGTHS]}
        results.append(row)
        print(json.dumps({k: row[k] for k in ("generation", "kernel", "per_block", "per_program", "dmas_per_page")}), flush=True)

  print()
  print(f"jax {jax.__version__}, libtpu {libtpu.__version__}; static estimates from libtpu's bundle listings, "
        "nothing ran on a TPU. Llama-3-8B-like decode (32/8 heads, d 128, bf16, 1 new token, pages of "
        f"{args.page_size}); {args.block_kv} positions of one kv head's k and v per block (1 MiB at d 128)")
  print()
  print("| generation | kernel | bundles per block (budget) | DMAs per page | spills per block | bundles per program |")
  print("|---|---|---|---|---|---|")
  for r in results:
    print(f"| {r['generation']} | {r['kernel']} | {r['per_block']['bundles']:,}{'' if r['kernel'] == 'kgen' else ' (≤)'} "
          f"({r['block_budget_bundles']:,.0f}) | {r['dmas_per_page']:.2g} | {r['per_block']['spills']} | "
          f"{r['per_program']['bundles']:,} |")
  print()
  print("Modeled share of HBM bandwidth (max model; in parentheses pipelined, then pipelined with copies "
        "starting 500 ns late):")
  print()
  print("| generation | batch | length | kgen | paged_attention | RPA |")
  print("|---|---|---|---|---|---|")
  for generation in args.generations:
    rows = {r["kernel"]: r for r in results if r["generation"] == generation}
    for i, shape in enumerate(rows["kgen"]["shapes"]):
      cells = []
      for name in ("kgen", "paged_attention", "rpa"):
        s = rows[name]["shapes"][i]
        cells.append(f"{100 * s['share']:.0f}% ({100 * s['share_pipelined']:.0f}%, {100 * s['share_started']:.0f}%)")
      print(f"| {generation} | {shape['batch']} | {shape['length'] // 1024}k | " + " | ".join(cells) + " |")
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump({"jax": jax.__version__, "libtpu": libtpu.__version__, "block_kv": args.block_kv,
                 "page_size": args.page_size, "results": results}, f, indent=2)
      f.write("\n")
  return 0


if __name__ == "__main__":
  sys.exit(main())
