#!/usr/bin/env python3
"""Every checked-in kernel carries exactly the features its spec asks for: for each spec in
SOURCE/specs, each of its generated tpu, sm90a and sm100a kernels is run through FileCheck once per
feature (softcap, segment ids, sinks, lse, how partial tiles are masked; for a decode spec its
mask and, split, its combine's sinks and lse) with the prefix the spec and its block plan
(`kgen plan`) call for, against features.check.

  check_spec_features.py SOURCE KGEN FILECHECK
"""
import json
import os
import subprocess
import sys

CHECKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "features.check")


def plan(kgen, source, spec_path, target):
    result = subprocess.run([kgen, "plan", spec_path, "--target", target], cwd=source,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def prefixes(spec, target, block_plan):
    """The features.check prefixes for one kernel: one per feature."""
    lang = {"sm90a": "CUDA", "sm100a": "CUDA", "tpu": "TPU"}[target]
    chosen = [f"{lang}-{'' if spec.get(key) else 'NO-'}{name}" for key, name in
              (("softcap", "SOFTCAP"), ("segment_ids", "SEGMENTS"), ("sinks", "SINKS"))]
    # With "backward": true the forward writes lse whatever outputs says (spec-format.md §7).
    lse = spec.get("outputs", {}).get("lse", spec.get("backward", False))
    chosen.append(f"{lang}-{'' if lse else 'NO-'}LSE")
    # How partial tiles are masked: decided once by kgen's plan, reported by every target.
    bitmask = "TABLE" if target == "tpu" else "BITMASK"
    chosen.append(f"{lang}-" + {"none": "NO-PARTIAL", "predicate": "PREDICATE",
                                "bitmask": bitmask}[block_plan["partial_tile_mask"]])
    return chosen


def decode_prefixes(spec, target, block_plan):
    """A decode spec's kernels (docs/decode.md), each file with the prefixes of the features it
    must (or must not) carry. tpu: the split kernel and, when split, its combine; split, the
    sinks join in the combine, and the kernel writes lse_s whatever outputs says. sm90a: the
    kernel file (score modifier, no segment ids) and its launcher header, whose constants set
    the sinks, lse and window of both the kernel and its combine."""
    split = block_plan["splits"] > 1
    sinks, lse = spec.get("sinks", False), spec.get("outputs", {}).get("lse", False)
    local = spec.get("mask", {}).get("type") == "local"
    softcap = f"{'' if spec.get('softcap') else 'NO-'}SOFTCAP"
    if target == "sm90a":
        return [("cu", [f"CUDA-{softcap}", "CUDA-NO-SEGMENTS"]),
                ("h", [f"CUDA-DECODE-{'' if sinks else 'NO-'}SINKS", f"CUDA-DECODE-{'' if lse else 'NO-'}LSE",
                       f"CUDA-DECODE-{'LOCAL' if local else 'CAUSAL'}"])]
    kernel = [f"TPU-{softcap}", "TPU-NO-SEGMENTS",
              f"TPU-DECODE-{'' if sinks and not split else 'NO-'}SINKS",
              f"TPU-{'' if lse or split else 'NO-'}LSE", f"TPU-DECODE-{'LOCAL' if local else 'CAUSAL'}"]
    files = [("mlir", kernel)]
    if split:
        files.append(("combine.mlir", [f"TPU-COMBINE-{'' if sinks else 'NO-'}SINKS",
                                       f"TPU-COMBINE-{'' if lse else 'NO-'}LSE"]))
    return files


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    source, kgen, filecheck = sys.argv[1:]
    failures, checked = [], 0
    for spec_file in sorted(os.listdir(os.path.join(source, "specs"))):
        if not spec_file.endswith(".json"):
            continue
        spec_path = os.path.join("specs", spec_file)
        with open(os.path.join(source, spec_path)) as f:
            spec = json.load(f)
        for target, extension in (("tpu", "mlir"), ("sm90a", "cu"), ("sm100a", "cu")):
            if target not in spec["targets"]:
                continue
            block_plan = plan(kgen, source, spec_path, target)
            if spec.get("kind") == "attention_decode":
                files = decode_prefixes(spec, target, block_plan)
            else:
                files = [(extension, prefixes(spec, target, block_plan))]
            for suffix, chosen in files:
                kernel = os.path.join(source, "generated", spec["name"], f"{spec['name']}.{target}.{suffix}")
                for prefix in chosen:
                    result = subprocess.run([filecheck, CHECKS, f"--check-prefix={prefix}", f"--input-file={kernel}",
                                             "--dump-input=never"], capture_output=True, text=True)
                    checked += 1
                    if result.returncode != 0:
                        failures.append(f"{kernel}: {prefix}\n{result.stderr}")
    for failure in failures:
        print(failure)
    print(f"{checked} feature checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
