#!/usr/bin/env python3
"""A stand-in measurer for kgen tune's tests (docs/tuning.md, "Measurers"): the same protocol
as bench/tpu_tune_measure.py, with a made-up cost that any reader can recompute: the sum over
the candidate's tile fields of |log2(value / 256)|, plus 1. A candidate whose block_kv is
FAKE_MEASURE_FAIL_BLOCK_KV (environment) answers an error instead; every job appends its id
to FAKE_MEASURE_LOG when set, so that a test sees which candidates were measured."""
import argparse
import json
import math
import os
import sys


def tiles_of(spec: dict, target: str, pass_name: str) -> dict:
  section = spec["targets"][target]
  if pass_name == "backward":
    section = section["backward"]
  return {k: v for k, v in section.items() if k.startswith("block_")}


def main() -> int:
  ap = argparse.ArgumentParser()
  ap.add_argument("--describe", action="store_true")
  ap.add_argument("--jobs")
  ap.add_argument("--parallel", type=int, default=1)
  args = ap.parse_args()
  if args.describe:
    print(json.dumps({"measured_by": "the fake measurer of tests/tune", "cost_unit": "fake units",
                      "tools": {"fake": "1"}, "sources": ["tests/tune/fake_measure.py"],
                      "columns": [["log_distance", "distance"]]}))
    return 0
  fail = os.environ.get("FAKE_MEASURE_FAIL_BLOCK_KV")
  log = os.environ.get("FAKE_MEASURE_LOG")
  print("a line that is not an answer", flush=True)
  with open(args.jobs, encoding="utf-8") as f:
    for line in f:
      job = json.loads(line)
      spec = json.load(open(job["spec"], encoding="utf-8"))
      # The kernels kgen tune generated for the candidate are where the job says.
      assert os.path.isdir(os.path.join(job["generated"], job["name"])), job
      tiles = tiles_of(spec, job["target"], job["pass"])
      if log:
        with open(log, "a", encoding="utf-8") as out:
          out.write(json.dumps(tiles, sort_keys=True) + "\n")
      if fail and str(tiles.get("block_kv")) == fail:
        print(json.dumps({"id": job["id"], "error": "planted failure"}), flush=True)
        continue
      distance = sum(abs(math.log2(v / 256)) for v in tiles.values())
      print(json.dumps({"id": job["id"], "cost": 1 + distance, "columns": {"log_distance": distance}}), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
