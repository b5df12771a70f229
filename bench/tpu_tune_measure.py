#!/usr/bin/env python3
"""kgen tune's measurer for the tpu target (docs/tuning.md, "Measurers").

    .venv-libtpu/bin/python bench/tpu_tune_measure.py --describe
    .venv-libtpu/bin/python bench/tpu_tune_measure.py --jobs JOBS.jsonl --parallel N

Each job (one JSON line: id, spec, generated, name, target, pass, kgen) is a candidate
tiling that kgen tune generated: its spec file with the tiles written in, and its kernels
under `generated`. The job's kernels are compiled deviceless for the spec's generation and
walked along libtpu's bundle listing (bench/tpu_static_cost.py): the cost is the modeled
bundles of the whole kernel run (outside the grid loop once, each grid step's path from the
block plan, the pipeline's extra trips); for the backward, the dq and dkv kernels' sum. A
decode kernel reads far more than it computes: its cost is the pipelined model of
bench/tpu_decode_cost.py at the spec's shape, in cycles, where a kv block costs the larger of its
bundles and its copy (an assumed start of 500 ns, then its bytes at the generation's HBM
bandwidth; every sequence at its full length), plus
a split kernel's combine reading its partials. Nothing runs on a TPU. One answer line per job, as each finishes:
{"id", "cost", "columns"} or {"id", "error"}. N worker processes compile side by side.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "mosaic_dialect"))

ELEMENT_BYTES = {"bfloat16": 2, "float16": 2}

# What a cached measurement depends on beyond the candidate's own files (kgen tune hashes them).
SOURCES = ["bench/tpu_static_cost.py", "bench/tpu_tune_measure.py", "bench/tpu_decode_cost.py",
           "tests/mosaic_dialect/tpu_deviceless_compile.py", "tests/mosaic_dialect/check_real_mosaic.py"]
COLUMNS = {
    "forward": [["full_step", "full step"], ["floor_share", "MXU floor"], ["spills", "spill ld/st"]],
    "backward": [["dq", "dq"], ["dkv", "dkv"], ["dq_full_step", "dq step"], ["dkv_full_step", "dkv step"],
                 ["floor_share", "MXU floor"]],
    "decode": [["block", "block"], ["program", "program"], ["dmas_per_page", "DMAs/page"],
               ["spills", "spills/block"], ["hbm_share", "HBM share"]],
}


def describe() -> dict:
  tools = {}
  for package in ("jax", "libtpu"):
    try:
      tools[package] = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
      tools[package] = "missing"
  return {"measured_by": "libtpu's static bundle listing walked per grid step (bench/tpu_static_cost.py; "
                         "deviceless, nothing runs on a TPU)",
          "cost_unit": "modeled bundles per kernel run (decode: cycles, a kv block the larger of its bundles "
                       "and its copy)",
          "tools": tools, "sources": SOURCES, "columns": COLUMNS}


_SESSION = None


def _start_worker(kgen: str, scratch: str) -> None:
  """Each worker compiles into its own dump folder; libtpu reads its flags once, at import."""
  global _SESSION  # pylint: disable=global-statement
  import tpu_static_cost as cost  # pylint: disable=import-outside-toplevel
  dump = tempfile.mkdtemp(prefix="worker_", dir=scratch)
  cost.dump_environment(dump)
  _SESSION = cost.Session(dump, kgen)


def _error(job: dict, error: Exception) -> dict:
  last = traceback.format_exception_only(type(error), error)[-1].strip()
  return {"id": job["id"], "error": last[:500]}


def measure(job: dict) -> dict:
  """One kgen candidate: its cost and the columns kgen tune prints beside it."""
  try:
    if job["pass"] == "decode":
      return measure_decode(job)
    kernels = ["forward"] if job["pass"] == "forward" else ["dq", "dkv"]
    rows = {k: _SESSION.kgen(job["spec"], job["generated"], k) for k in kernels}
    full = {k: r["bundles_per_step"]["full"] for k, r in rows.items()}
    floor = sum(r["mxu_floor_cycles_per_tile"] for r in rows.values())
    columns = {"floor_share": round(floor / sum(full.values()), 4)}
    if job["pass"] == "forward":
      spills = rows["forward"]["spills_per_step"]["full"]
      columns.update(full_step=full["forward"], spills=f"{spills['loads']}/{spills['stores']}")
    else:
      columns.update(dq=rows["dq"]["modeled_bundles"], dkv=rows["dkv"]["modeled_bundles"],
                     dq_full_step=full["dq"], dkv_full_step=full["dkv"])
    return {"id": job["id"], "cost": sum(r["modeled_bundles"] for r in rows.values()), "columns": columns}
  except Exception as error:  # pylint: disable=broad-except
    return _error(job, error)


def measure_decode(job: dict) -> dict:
  """One kgen decode candidate: bench/tpu_decode_cost.py's per-block and per-program bundles of
  its kernel, priced at the spec's shape by the pipelined model."""
  import tpu_decode_cost as dc  # pylint: disable=import-outside-toplevel
  spec = json.load(open(job["spec"], encoding="utf-8"))
  gen = spec["targets"]["tpu"].get("generation", "v5e")
  shape = spec["shape"]
  plan = json.loads(subprocess.run([job["kgen"], "plan", job["spec"], "--target", "tpu"],
                                   check=True, capture_output=True, text=True).stdout)
  name = spec["name"]
  module = os.path.join(job["generated"], name, f"{name}.tpu.mlir")
  page_size = plan["page_size"] or plan["block_kv"]
  listed = []

  def compile_fn(fn, args):
    import jax  # pylint: disable=import-outside-toplevel
    import tpu_static_cost as cost  # pylint: disable=import-outside-toplevel
    device = _SESSION.device(gen)

    def run():
      with jax.default_device(device):
        cost.compile_on(device, fn, args)

    listing, files = _SESSION.new_listing(run)
    listed.append(files)
    return listing

  with tempfile.TemporaryDirectory(prefix="kgen_tune_decode_") as work:
    costs = dc.kernel_costs(module, plan["block_kv"], page_size, compile_fn, work)
  for files in listed:
    _SESSION.forget(files)
  clock = dc.clock_hz(gen, costs["mxus"])
  bytes_per_cycle = dc.HBM_BYTES_PER_S[gen] / clock
  d, dv = shape["head_dim"], shape.get("head_dim_v", shape["head_dim"])
  block_bytes = plan["block_kv"] * (d + dv) * ELEMENT_BYTES[spec["dtype"]]
  programs = plan["grid"][0] * plan["grid"][1] * plan["grid"][2]
  blocks = programs * -(-plan["kv_blocks"] // plan["splits"])
  cycles = dc.pipelined_cycles(costs, block_bytes, bytes_per_cycle, dc.DMA_START_S * clock, programs, blocks)
  if plan["splits"] > 1:  # the combine reads each split's f32 out and lse rows once
    rows = programs * plan["q_tile_rows"]
    cycles += rows * (dv + 1) * 4 / bytes_per_cycle
  must_read = blocks * block_bytes / bytes_per_cycle
  columns = {"block": costs["block"]["bundles"], "program": costs["program"]["bundles"],
             "dmas_per_page": round(costs["dmas_per_page"], 2), "spills": costs["block"]["spills"],
             "hbm_share": round(must_read / cycles, 3)}
  return {"id": job["id"], "cost": round(cycles), "columns": columns}


def measure_splash(job: dict) -> dict:
  """JAX's Splash for a spec at one tiling (bench/tpu_best_vs_best.py): job "spec" (a spec
  file), "tiles" (block_q, block_kv, block_kv_compute) and "pass": forward (its forward
  kernel), backward (its forward with residuals, dq and dkv kernels from one compile of the
  vjp) or fused (its fused dkv kernel). Every kernel's summary (bench/tpu_static_cost.py)."""
  try:
    spec = json.load(open(job["spec"], encoding="utf-8"))
    spec_dir = os.path.dirname(os.path.abspath(job["spec"]))
    rows = _SESSION.splash(spec, spec_dir, job["tiles"], backward=job["pass"] != "forward",
                           fused=job["pass"] == "fused")
    return {"id": job["id"], "rows": rows}
  except Exception as error:  # pylint: disable=broad-except
    return _error(job, error)


def _run(job: dict) -> dict:
  return measure_splash(job) if job.get("kernel") == "splash" else measure(job)


def run_jobs(jobs: list, parallel: int, kgen: str):
  """Yields each job's answer as it finishes, `parallel` worker processes at a time."""
  if not jobs:
    return
  # Worker processes start fresh (spawn), so each imports jax after its dump flags are set;
  # their dump folders lie under one that goes when the jobs are done.
  context = multiprocessing.get_context("spawn")
  scratch = tempfile.mkdtemp(prefix="kgen_tune_tpu_")
  pool = context.Pool(max(1, min(parallel, len(jobs))), initializer=_start_worker, initargs=(kgen, scratch))
  try:
    for answer in pool.imap_unordered(_run, jobs):
      yield answer
    pool.close()  # workers exit on their own: terminating them makes libtpu print a crash report
  except BaseException:
    pool.terminate()
    raise
  finally:
    pool.join()
    shutil.rmtree(scratch, ignore_errors=True)


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
  if not jobs:
    return 0
  for answer in run_jobs(jobs, args.parallel, jobs[0]["kgen"]):
    print(json.dumps(answer), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
