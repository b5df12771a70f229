#!/usr/bin/env python3
"""Best against best: kgen's tpu kernels and JAX's Splash, each at its own best tiling, by
libtpu's static bundle counts (docs/benchmarks.md). Nothing runs on a TPU.

    .venv-libtpu/bin/python bench/tpu_best_vs_best.py SPEC... [--kgen build/generator/kgen]
        [--tables tuning] [--budget N] [--parallel N] [--json FILE]

For each spec (a tpu target; the backward too when it says "backward": true):

  kgen: the entries `kgen tune SPEC --target tpu --pass forward|backward --budget N` wrote
    into the tuning table (DIR/tpu/<generation>.json): the first-ranked tiling of each pass,
    by modeled bundles per kernel run (the forward; the backward's dq and dkv together, which
    share their tiles in kgen).
  Splash: the same candidate tilings (`kgen tune ... --list --budget N`: kgen's legal tilings
    nearest its default rule's, the list kgen's sweep measured), each compiled once as the vjp
    of `splash_attention` at that tiling (its forward with residuals, its dq and its dkv kernel)
    and once with `use_fused_bwd_kernel` (its dkv kernel computing dq too). Splash's
    BlockSizes sets the dq and dkv kernels' blocks apart, so its two-kernel backward is its
    best dq plus its best dkv; its fused backward is its best fused dkv.

The table per spec: each side's best tiling, bundles per full grid step, the full step's share
of the MXU floor (the tile's matmul FLOPs at peak ÷ the step's bundles), and the ratios: per
full step at equal work (kgen's bundles per floor cycle ÷ Splash's: the two tilings' tiles
differ) and of the modeled kernel runs. Splash measurements are cached by content in
~/.cache/kgen/tune-splash ($KGEN_TUNE_CACHE/../tune-splash; "off" in KGEN_TUNE_CACHE: none).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import tpu_tune_measure as measurer  # pylint: disable=wrong-import-position


def cache_folder():
  setting = os.environ.get("KGEN_TUNE_CACHE")
  if setting == "off":
    return None
  base = os.path.dirname(setting.rstrip("/")) if setting else os.path.join(os.path.expanduser("~"), ".cache", "kgen")
  return os.path.join(base, "tune-splash")


def cache_key(spec_path: str, tiles: dict, pass_name: str) -> str:
  """Everything a Splash measurement depends on: the spec's fields (not its name, comment or
  tiles), its mask files, the tiles, the pass, the tool versions and the measuring code."""
  spec = json.load(open(spec_path, encoding="utf-8"))
  digest = hashlib.sha256()
  fields = {k: v for k, v in spec.items() if k not in ("name", "comment", "targets")}
  fields["generation"] = spec["targets"]["tpu"]["generation"]
  digest.update(json.dumps([fields, tiles, pass_name, measurer.describe()], sort_keys=True).encode())
  mask = spec.get("mask") or {}
  if "npy" in mask:
    with open(os.path.join(os.path.dirname(os.path.abspath(spec_path)), mask["npy"]), "rb") as f:
      digest.update(f.read())
  for source in measurer.SOURCES + ["bench/tpu_best_vs_best.py"]:
    with open(os.path.join(ROOT, source), "rb") as f:
      digest.update(hashlib.sha256(f.read()).digest())
  return digest.hexdigest()


def kgen_json(kgen: str, *args) -> dict:
  done = subprocess.run([kgen, *args], check=True, capture_output=True, text=True, cwd=ROOT)
  return json.loads(done.stdout)


def plain_tiles(tiles: dict) -> dict:
  """{"backward.block_q": 512, ...} -> {"block_q": 512, ...}"""
  return {k.split(".")[-1]: v for k, v in tiles.items()}


def kgen_best(tables: str, generation: str, key: str, pass_name: str):
  with open(os.path.join(tables, "tpu", f"{generation}.json"), encoding="utf-8") as f:
    entry = json.load(f)["entries"].get(key, {}).get(pass_name)
  if not entry:
    return None
  return entry["measured"][0]


def splash_sweep(spec_path: str, candidates: dict, kgen: str, parallel: int) -> dict:
  """Splash's rows per (pass, tiling): forward and backward (dq, dkv) from one vjp compile per
  tiling of either list, fused per tiling of the backward list."""
  folder = cache_folder()
  wanted = {}
  backward = {json.dumps(plain_tiles(t), sort_keys=True) for t in candidates.get("backward", [])}
  for pass_name, tilings in candidates.items():
    for tiles in tilings:
      text = json.dumps(plain_tiles(tiles), sort_keys=True)
      # A forward tiling the backward also tries comes with the vjp's compile.
      kinds = ["backward", "fused"] if pass_name == "backward" else ["backward"] if text in backward else ["forward"]
      for kind in kinds:
        wanted[(kind, text)] = plain_tiles(tiles)
  results, jobs = {}, []
  for (kind, text), tiles in sorted(wanted.items()):
    key = cache_key(spec_path, tiles, kind)
    path = os.path.join(folder, key + ".json") if folder else None
    if path and os.path.exists(path):
      with open(path, encoding="utf-8") as f:
        results[(kind, text)] = json.load(f)
      continue
    jobs.append({"id": len(jobs), "kernel": "splash", "spec": os.path.abspath(spec_path), "tiles": tiles,
                 "pass": kind, "kgen": kgen, "cache": path, "slot": [kind, text]})
  print(f"{os.path.basename(spec_path)}: Splash at {len(wanted)} (tiling, backward kind) pairs, "
        f"{len(wanted) - len(jobs)} from the cache", file=sys.stderr, flush=True)
  for n, answer in enumerate(measurer.run_jobs(jobs, parallel, kgen), 1):
    job = jobs[answer["id"]]
    results[tuple(job["slot"])] = answer
    print(f"  [{n}/{len(jobs)}] Splash {job['pass']} {job['tiles']}: "
          f"{'failed: ' + answer['error'] if 'error' in answer else 'measured'}", file=sys.stderr, flush=True)
    if job["cache"] and "error" not in answer:
      os.makedirs(os.path.dirname(job["cache"]), exist_ok=True)
      with open(job["cache"] + ".tmp", "w", encoding="utf-8") as f:
        json.dump(answer, f)
      os.replace(job["cache"] + ".tmp", job["cache"])
  return results


def best_of(results: dict, kinds: tuple, kernel: str, tilings: list):
  """The Splash row of `kernel` with the fewest modeled bundles over `tilings`."""
  best = None
  for tiles in tilings:
    for kind in kinds:
      answer = results.get((kind, json.dumps(plain_tiles(tiles), sort_keys=True)), {})
      for row in answer.get("rows", []):
        if row["kernel"] == kernel and (best is None or row["modeled_bundles"] < best["modeled_bundles"]):
          best = row
  if best is None:
    raise SystemExit(f"Splash's {kernel} compiled at none of the {len(tilings)} tilings")
  return best


def tiles_text(tiles: dict) -> str:
  t = plain_tiles(tiles)
  return "/".join(str(t[k]) for k in ("block_q", "block_kv", "block_kv_compute") if k in t)


def compare(spec_path: str, args) -> dict:
  spec = json.load(open(spec_path, encoding="utf-8"))
  generation = spec["targets"]["tpu"]["generation"]
  passes = ["forward"] + (["backward"] if spec.get("backward") else [])
  candidates, kgen_rows = {}, {}
  for pass_name in passes:
    listed = kgen_json(args.kgen, "tune", spec_path, "--target", "tpu", "--pass", pass_name, "--list",
                       "--budget", str(args.budget))
    candidates[pass_name] = listed["to_measure"]
    kgen_rows[pass_name] = kgen_best(args.tables, generation, listed["key"], pass_name)
    if kgen_rows[pass_name] is None:
      raise SystemExit(f"{spec_path}: no {pass_name} entry {listed['key']} in {args.tables}/tpu/{generation}.json: "
                       f"kgen tune {spec_path} --target tpu --pass {pass_name} --budget {args.budget} first")
  results = splash_sweep(spec_path, candidates, args.kgen, args.parallel)
  out = {"spec": spec["name"], "generation": generation, "budget": args.budget,
         "candidates": {p: len(c) for p, c in candidates.items()}}
  k = kgen_rows["forward"]
  s = best_of(results, ("forward", "backward"), "splash", candidates["forward"])
  out["forward"] = {
      "kgen": {"tiles": plain_tiles(k["tiles"]), "full_step": k["columns"]["full_step"],
               "floor_share": k["columns"]["floor_share"], "modeled_bundles": k["cost"]},
      "splash": {"tiles": s["tiles"], "full_step": s["bundles_per_step"]["full"],
                 "floor_share": s["mxu_floor_share"], "modeled_bundles": s["modeled_bundles"]},
  }
  if "backward" in passes:
    k = kgen_rows["backward"]
    dq = best_of(results, ("backward",), "splash-dq", candidates["backward"])
    dkv = best_of(results, ("backward",), "splash-dkv", candidates["backward"])
    fused = best_of(results, ("fused",), "splash-fused-dkv", candidates["backward"])
    kgen_floor = (k["columns"]["dq_full_step"] + k["columns"]["dkv_full_step"]) * k["columns"]["floor_share"]
    out["backward"] = {
        "kgen": {"tiles": plain_tiles(k["tiles"]), "dq_full_step": k["columns"]["dq_full_step"],
                 "dkv_full_step": k["columns"]["dkv_full_step"], "floor_share": k["columns"]["floor_share"],
                 "floor_cycles": kgen_floor, "modeled_bundles": k["cost"], "dq_modeled": k["columns"]["dq"],
                 "dkv_modeled": k["columns"]["dkv"]},
        "splash_dq": {"tiles": dq["tiles"], "full_step": dq["bundles_per_step"]["full"],
                      "floor_cycles": dq["mxu_floor_cycles_per_tile"], "modeled_bundles": dq["modeled_bundles"],
                      "spills": dq["spills_per_step"]["full"]},
        "splash_dkv": {"tiles": dkv["tiles"], "full_step": dkv["bundles_per_step"]["full"],
                       "floor_cycles": dkv["mxu_floor_cycles_per_tile"], "modeled_bundles": dkv["modeled_bundles"],
                       "spills": dkv["spills_per_step"]["full"]},
        "splash_fused": {"tiles": fused["tiles"], "full_step": fused["bundles_per_step"]["full"],
                         "floor_cycles": fused["mxu_floor_cycles_per_tile"],
                         "floor_share": fused["mxu_floor_share"], "modeled_bundles": fused["modeled_bundles"]},
    }
  return out


def markdown(results: list) -> str:
  lines = ["Forward, each at its best tiling (block_q/block_kv/block_kv_compute):", "",
           "| spec | generation | kgen best | kgen full step | kgen MXU-floor share | Splash best | Splash full step | "
           "Splash MXU-floor share | kgen ÷ Splash per full step (equal work) | kgen ÷ Splash modeled run |",
           "|---|---|---|---|---|---|---|---|---|---|"]
  for r in results:
    k, s = r["forward"]["kgen"], r["forward"]["splash"]
    lines.append(f"| {r['spec']} | {r['generation']} | {tiles_text(k['tiles'])} | {k['full_step']:,} | "
                 f"{100 * k['floor_share']:.0f}% | {tiles_text(s['tiles'])} | {s['full_step']:,} | "
                 f"{100 * s['floor_share']:.0f}% | {s['floor_share'] / k['floor_share']:.2f}× | "
                 f"{k['modeled_bundles'] / s['modeled_bundles']:.2f}× |")
  backward = [r for r in results if "backward" in r]
  if backward:
    lines += ["", "Backward, each at its best tiling: kgen's dq + dkv (one tiling), Splash's dq and dkv "
                  "(each its own) and Splash's fused dkv:", "",
              "| spec | generation | kgen best | kgen dq + dkv full steps | kgen MXU-floor share | Splash dq best | "
              "Splash dkv best | Splash dq + dkv full steps | Splash MXU-floor share | Splash fused best | "
              "fused full step | fused MXU-floor share | kgen ÷ Splash two kernels, per full step (equal work) | "
              "modeled run | kgen ÷ Splash fused, per full step (equal work) | modeled run |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in backward:
      b = r["backward"]
      k, dq, dkv, fused = b["kgen"], b["splash_dq"], b["splash_dkv"], b["splash_fused"]
      k_steps = k["dq_full_step"] + k["dkv_full_step"]
      s_steps = dq["full_step"] + dkv["full_step"]
      s_share = (dq["floor_cycles"] + dkv["floor_cycles"]) / s_steps
      two_modeled = dq["modeled_bundles"] + dkv["modeled_bundles"]
      lines.append(
          f"| {r['spec']} | {r['generation']} | {tiles_text(k['tiles'])} | {k_steps:,} | "
          f"{100 * k['floor_share']:.0f}% | {tiles_text(dq['tiles'])} | {tiles_text(dkv['tiles'])} | {s_steps:,} | "
          f"{100 * s_share:.0f}% | {tiles_text(fused['tiles'])} | {fused['full_step']:,} | "
          f"{100 * fused['floor_share']:.0f}% | {s_share / k['floor_share']:.2f}× | "
          f"{k['modeled_bundles'] / two_modeled:.2f}× | {fused['floor_share'] / k['floor_share']:.2f}× | "
          f"{k['modeled_bundles'] / fused['modeled_bundles']:.2f}× |")
  return "\n".join(lines)


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("spec", nargs="+")
  ap.add_argument("--kgen", default=os.environ.get("KGEN", os.path.join(ROOT, "build", "generator", "kgen")))
  ap.add_argument("--tables", default=os.path.join(ROOT, "tuning"))
  ap.add_argument("--budget", type=int, default=8)
  ap.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
  ap.add_argument("--json")
  args = ap.parse_args(argv)
  args.kgen = os.path.abspath(args.kgen)
  results = [compare(spec, args) for spec in args.spec]
  tools = measurer.describe()["tools"]
  print(f"jax {tools['jax']}, libtpu {tools['libtpu']}; static estimates from libtpu's bundle listings, "
        f"nothing ran on a TPU; each kernel at its best of the same {args.budget} candidate tilings per pass")
  print()
  print(markdown(results))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump({"tools": tools, "results": results}, f, indent=2)
      f.write("\n")
  return 0


if __name__ == "__main__":
  sys.exit(main())
