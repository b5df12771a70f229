#!/usr/bin/env python3
"""kgen tune's measurer for the CUDA targets, sm90a and sm100a (docs/tuning.md, "Measurers").

    .venv/bin/python verify/cuda/tune_measure.py --describe
    .venv/bin/python verify/cuda/tune_measure.py --jobs JOBS.jsonl --parallel N

No GPU exists here, so the cost is a model, fed by what the compiler says about each
candidate. Each job's kernel (<name>.<target>.cu, or .backward.cu for the backward pass) is
compiled by verify/cuda/compile_check.py, nvcc for sm_90a or sm_100a with every check a
generated kernel must pass (a candidate that spills or loses the wgmma pipeline answers an
error and is never ranked); its outputs are cached by content in ~/.cache/kgen/nvcc. From the
compile come the registers per thread and the SASS (instruction count, tensor-core
instructions); from kgen tune the shared memory of the tiling and its live tiles; from kgen's
block plan the live tiles of each CTA's work.

The model, in SM cycles of one kernel run (constants in DEVICES, assumptions in the doc):
  * resident CTAs per SM: the least of what the registers (registers x threads of 64K) and
    the shared memory (of the SM's) allow; none answers an error;
  * one tile's cycles: the larger of its tensor-core time (its matmul FLOPs at the SM's dense
    peak) and its exponentials' (one per score on the MUFU, 16 a cycle per SM), plus a fixed
    pipeline handoff; the SM's co-resident CTAs share both units;
  * the kernel: each work item (a q block of one head; for the backward a kv block) costs its
    live tiles' cycles; items are dealt in grid order to the first free CTA slot of the SMs
    (the hardware's dispatch of a non-persistent grid; sm100a's persistent CTAs take their
    items in the same order), and the kernel takes as long as the busiest slot.
It leaves out memory traffic, latency the pipeline does not hide and instruction issue: it
ranks tilings by tensor-core work, masked waste and wave quantization, not by how well a
tiling's code runs.

A decode kernel (sm90a) reads far more than it computes, so its model adds the memory: each kv
block costs the larger of its K and V bytes at the SM's share of the chip's HBM bandwidth, its
matmuls (the q tile padded to the wgmma's 64 rows) and its exponentials, plus the handoff; each
CTA (a split of one q tile of one kv head of one sequence, from kgen's decode plan, every
sequence at the cache's full length) walks its split's blocks plus one block's worth of fixed
cost, as kgen's own split rule counts it; a split kernel adds its combine, a second launch
reading the partials. The ptxemu instruction counts of a candidate are not measured (a column
left empty: emulating every candidate costs minutes each); measured GPU time is a column that
stays empty until a GPU exists.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import compile_check  # pylint: disable=wrong-import-position

SOURCES = ["verify/cuda/tune_measure.py", "verify/cuda/compile_check.py", "verify/cuda/nvcc_cache.py"]
COLUMNS = [["registers", "registers"], ["ctas_per_sm", "CTAs/SM"], ["tile_cycles", "cycles/tile"],
           ["tensor_share", "tensor share"], ["sass", "SASS instr"], ["mma_sass", "MMA instr"],
           ["emulated_instructions", "emulated"]]

# Per SM: dense 16-bit tensor-core FLOPs a cycle (the part's dense bf16 peak over its SMs and
# boost clock), MUFU exponentials a cycle, shared memory a CTA may use, the register file.
# Per chip: HBM bytes a cycle (the part's bandwidth over its boost clock: 3.35 TB/s, 8 TB/s).
DEVICES = {
    "sm90a": {"part": "H100 SXM", "sms": 132, "flops_per_cycle": 4096, "exp_per_cycle": 16,
              "smem_bytes": 227 * 1024, "registers": 65536, "clock_hz": 1.83e9,
              "hbm_bytes_per_cycle": 3.35e12 / 1.83e9},
    "sm100a": {"part": "B200", "sms": 148, "flops_per_cycle": 8192, "exp_per_cycle": 16,
               "smem_bytes": 227 * 1024, "registers": 65536, "clock_hz": 1.85e9,
               "hbm_bytes_per_cycle": 8e12 / 1.85e9},
}
# Cycles a tile pays beyond its units' work: the barrier handoff between the producer and the
# consumers and the softmax's row reductions (an assumption; the same for every tiling).
HANDOFF_CYCLES = 64
DTYPE_BYTES = {"bfloat16": 2, "float16": 2}
# Cycles of a kernel launch beyond its work (the launch and the last wave's tail: about 2 us;
# an assumption), paid by a split decode's combine.
LAUNCH_CYCLES = 4000
# The rows of a wgmma tile: a decode CTA's q tile is padded to them.
WGMMA_ROWS = 64
# Matmul FLOPs per (query, key) pair of a tile, over 2: the forward's q kᵀ and p v; the
# backward's q kᵀ, do vᵀ, pᵀ do, dsᵀ q and ds k.
PASS_FLOPS = {"forward": lambda d, dv: d + dv, "backward": lambda d, dv: 3 * d + 2 * dv}


def tools() -> dict:
  site = sorted(glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages")))
  site = site[0] if site else ""
  return {"nvcc": os.environ.get("KGEN_NVCC", "/usr/local/cuda/bin/nvcc"),
          "cutlass_include": os.path.join(site, "cutlass_library", "source", "include"),
          "cuobjdump": os.path.join(site, "nvidia", "cu13", "bin", "cuobjdump"),
          "runtime_include": os.path.join(ROOT, "runtime")}


def describe() -> dict:
  t = tools()
  try:
    versions = compile_check.tool_versions(argparse.Namespace(nvcc=t["nvcc"], cutlass_include=t["cutlass_include"]))
  except OSError:
    versions = {"nvcc": "missing", "cutlass": "missing"}
  return {"measured_by": "a model from nvcc's compile facts and kgen's block plan (verify/cuda/tune_measure.py; "
                         "no GPU, nothing executed)",
          "cost_unit": "modeled SM cycles per kernel run", "tools": versions, "sources": SOURCES,
          "columns": COLUMNS}


# ---------------------------------------------------------------------------------------
# The model (pure functions: tests/tune/cuda_model_test.py)


def ctas_per_sm(device: dict, registers: int, threads: int, smem_bytes: int) -> int:
  by_registers = device["registers"] // max(1, registers * threads)
  by_smem = device["smem_bytes"] // smem_bytes if smem_bytes > 0 else by_registers
  return min(by_registers, by_smem)


def tile_cycles(device: dict, block_q: int, block_kv: int, d: int, dv: int, pass_name: str) -> dict:
  mma = 2.0 * block_q * block_kv * PASS_FLOPS[pass_name](d, dv) / device["flops_per_cycle"]
  exp = block_q * block_kv / device["exp_per_cycle"]
  return {"cycles": max(mma, exp) + HANDOFF_CYCLES, "tensor": mma}


def makespan(items: list, slots: int, cycles_per_tile: float) -> float:
  """Items (live tiles each) dealt in order to the first free of `slots`; the busiest's cycles."""
  free = [0.0] * max(1, slots)
  for tiles in items:
    k = min(range(len(free)), key=free.__getitem__)
    free[k] += tiles * cycles_per_tile
  return max(free)


def forward_items(plan: dict) -> list:
  """Live tiles per work item in grid order (batch, head, q block) from kgen's block plan."""
  batch, heads, q_blocks = plan["grid"]
  full, partial = plan["full_kv_blocks"], plan["partial_kv_blocks"]
  groups = len(full)
  items = []
  for _ in range(batch):
    for h in range(heads):
      g = h % groups if groups > 1 else 0
      for i in range(q_blocks):
        items.append(len(full[g][i]) + len(partial[g][i]))
  return items


def model_cost(device: dict, facts: dict) -> dict:
  """facts: registers, threads, smem_bytes, block_q, block_kv, d, dv, pass, items."""
  ctas = ctas_per_sm(device, facts["registers"], facts["threads"], facts["smem_bytes"])
  if ctas < 1:
    raise ValueError(f"no CTA fits an SM ({facts['registers']} registers x {facts['threads']} threads, "
                     f"{facts['smem_bytes']} bytes of shared memory)")
  tile = tile_cycles(device, facts["block_q"], facts["block_kv"], facts["d"], facts["dv"], facts["pass"])
  # Co-resident CTAs share the SM's tensor cores and MUFU: each tile takes `ctas` times as long.
  cycles = makespan(facts["items"], device["sms"] * ctas, tile["cycles"] * ctas)
  return {"cost": cycles, "ctas_per_sm": ctas, "tile_cycles": round(tile["cycles"]),
          "tensor_share": round(tile["tensor"] / tile["cycles"], 3)}


def decode_cost(device: dict, facts: dict) -> dict:
  """facts: registers, threads, smem_bytes, block_kv, d, dv, dtype_bytes, kv_blocks (per
  sequence), splits, ctas (the decode grid's), rows (q rows of a tile)."""
  ctas = ctas_per_sm(device, facts["registers"], facts["threads"], facts["smem_bytes"])
  if ctas < 1:
    raise ValueError(f"no CTA fits an SM ({facts['registers']} registers x {facts['threads']} threads, "
                     f"{facts['smem_bytes']} bytes of shared memory)")
  width = facts["d"] + facts["dv"]
  load = facts["block_kv"] * width * facts["dtype_bytes"] / (device["hbm_bytes_per_cycle"] / device["sms"])
  mma = 2.0 * WGMMA_ROWS * facts["block_kv"] * width / device["flops_per_cycle"]
  exp = WGMMA_ROWS * facts["block_kv"] / device["exp_per_cycle"]
  block = max(load, mma, exp) + HANDOFF_CYCLES
  blocks = -(-facts["kv_blocks"] // facts["splits"])
  # Co-resident CTAs share the SM's HBM share and units: each block takes `ctas` times as long.
  cycles = makespan([blocks + 1] * facts["ctas"], device["sms"] * ctas, block * ctas)
  combine = 0.0
  if facts["splits"] > 1:
    # out_s and lse_s in f32: every row of every split, written once and read once.
    q_tiles = -(-facts["rows"] // WGMMA_ROWS)
    partials = 2 * (facts["ctas"] // q_tiles) * facts["rows"] * (facts["dv"] + 1) * 4
    combine = LAUNCH_CYCLES + partials / device["hbm_bytes_per_cycle"]
  return {"cost": cycles + combine, "ctas_per_sm": ctas, "tile_cycles": round(block),
          "tensor_share": round(mma / block, 3)}


# ---------------------------------------------------------------------------------------
# One candidate


def sass_counts(cuobjdump: str, obj: str, mma_pattern: str) -> tuple[int, int]:
  sass = subprocess.run([cuobjdump, "-sass", obj], capture_output=True, text=True, check=True).stdout
  instructions = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass)
  return len(instructions), sum(1 for i in instructions if re.search(mma_pattern, i))


def kgen_plan(job: dict) -> dict:
  return json.loads(subprocess.run([job["kgen"], "plan", job["spec"], "--target", job["target"]],
                                   capture_output=True, text=True, check=True).stdout)


def tile_facts(job: dict, spec: dict) -> dict:
  """model_cost's facts of a forward or backward candidate beyond its compile's."""
  shape = spec["shape"]
  tiles = spec["targets"][job["target"]]
  if job["pass"] == "backward":
    tiles = tiles["backward"]
    # No block plan of the sm90a backward (kgen plan plans its forward only): the live tiles
    # spread evenly over its items, one per kv block of each head.
    items_count = shape.get("batch", 1) * shape["q_heads"] * (shape["kv_len"] // tiles["block_kv"])
    per = job["live_tiles"] * shape.get("batch", 1) / max(1, items_count)
    items = [per] * items_count
  else:
    items = forward_items(kgen_plan(job))
  return {"block_q": tiles["block_q"], "block_kv": tiles["block_kv"], "d": shape["head_dim"],
          "dv": shape.get("head_dim_v", shape["head_dim"]), "pass": job["pass"], "items": items}


def decode_facts(job: dict, spec: dict) -> dict:
  """decode_cost's facts of a decode candidate beyond its compile's, from kgen's decode plan."""
  shape = spec["shape"]
  plan = kgen_plan(job)
  return {"block_kv": plan["block_kv"], "d": shape["head_dim"], "dv": shape.get("head_dim_v", shape["head_dim"]),
          "dtype_bytes": DTYPE_BYTES[spec["dtype"]], "kv_blocks": plan["kv_blocks"], "splits": plan["splits"],
          "ctas": plan["grid"][0] * plan["grid"][1] * plan["grid"][2], "rows": plan["q_tile_rows"]}


def measure(job: dict) -> dict:
  try:
    target = job["target"]
    device = DEVICES[target]
    spec = json.load(open(job["spec"], encoding="utf-8"))
    name = spec["name"]
    backward = job["pass"] == "backward"
    kernel = os.path.join(job["generated"], name, f"{name}.{target}{'.backward' if backward else ''}.cu")
    source = open(kernel, encoding="utf-8").read()
    threads = int(re.search(r"kThreads = (\d+);", source).group(1))
    t = tools()
    with tempfile.TemporaryDirectory(prefix="kgen_tune_cuda_") as scratch:
      report, obj = os.path.join(scratch, "report.json"), os.path.join(scratch, "kernel.o")
      arch = "sm_90a" if target == "sm90a" else "sm_100a"
      run = subprocess.run([sys.executable, os.path.join(HERE, "compile_check.py"), kernel, "--nvcc", t["nvcc"],
                            "--cutlass-include", t["cutlass_include"], "--runtime-include", t["runtime_include"],
                            "--cuobjdump", t["cuobjdump"], "--arch", arch, "--object", obj, "--report", report],
                           capture_output=True, text=True, check=False)
      if run.returncode != 0 or not os.path.exists(obj):
        found = json.load(open(report, encoding="utf-8")) if os.path.exists(report) else {}
        why = "; ".join(found.get("failures") or []) or (run.stdout + run.stderr).strip()[-300:]
        return {"id": job["id"], "error": f"compile check failed: {why}"}
      found = json.load(open(report, encoding="utf-8"))
      sass, mma = sass_counts(t["cuobjdump"], obj, r"\bHGMMA\b" if target == "sm90a" else r"\bUTC\w*MMA\b")
    common = {"registers": found["registers"], "threads": threads, "smem_bytes": job.get("memory_bytes", 0)}
    out = decode_cost(device, dict(common, **decode_facts(job, spec))) if job["pass"] == "decode" else \
        model_cost(device, dict(common, **tile_facts(job, spec)))
    columns = {k: out[k] for k in ("ctas_per_sm", "tile_cycles", "tensor_share")}
    columns.update(registers=found["registers"], sass=sass, mma_sass=mma, emulated_instructions=None)
    return {"id": job["id"], "cost": out["cost"], "columns": columns, "gpu_time_s": None}
  except Exception as error:  # pylint: disable=broad-except
    return {"id": job["id"], "error": f"{type(error).__name__}: {error}"[:500]}


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--describe", action="store_true")
  ap.add_argument("--jobs")
  ap.add_argument("--parallel", type=int, default=1)
  args = ap.parse_args(argv)
  if args.describe:
    print(json.dumps(describe()))
    return 0
  if not args.jobs:
    ap.error("--describe or --jobs FILE")
  with open(args.jobs, encoding="utf-8") as f:
    jobs = [json.loads(line) for line in f if line.strip()]
  # nvcc is the work: threads are enough to run N compiles side by side.
  with concurrent.futures.ThreadPoolExecutor(max(1, args.parallel)) as pool:
    for done in concurrent.futures.as_completed([pool.submit(measure, job) for job in jobs]):
      print(json.dumps(done.result()), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
