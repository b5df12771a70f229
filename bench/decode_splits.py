#!/usr/bin/env python3
"""kgen's decode split rule (generator/decode_splits.cc, through `kgen plan`) beside the rules of
FlashAttention-3, FlashAttention-4 and FlashInfer, over a grid of Llama-3-8B-like decode shapes on
an H100 (132 SMs). The three other rules are re-stated here from their published descriptions
(../shared/reference/decode.md §3), not copied:

  FA3        one split when the q tiles (batch x kv heads x ceil(q_len * group / 64)) fill 80% of
             the SMs or the kv walk has at most 4 blocks; else the fewest splits (at most
             min(128, SMs, blocks)) whose wave efficiency (waves / ceil(waves)) is within 85% of
             the best.
  FA4        min(SMs // q tiles, 128, blocks).
  FlashInfer no split when batch x kv heads fills the SMs (occupancy 1 here); else the smallest
             chunk of at least 128 positions, found by binary search, whose chunks fit one grid.

  bench/decode_splits.py [--kgen build/generator/kgen] [--markdown] [--differing]
"""

import argparse
import json
import math
import os
import subprocess
import tempfile

SMS = 132
BLOCK_KV = 128
ROWS = 64


def fa3(batch, kv_heads, q_tiles, blocks):
    units = batch * kv_heads * q_tiles
    if units >= 0.8 * SMS or blocks <= 4:
        return 1
    limit = min(128, SMS, blocks)
    eff = {s: (units * s / SMS) / math.ceil(units * s / SMS) for s in range(1, limit + 1)}
    best = max(eff.values())
    return min(s for s, e in eff.items() if e >= 0.85 * best)


def fa4(batch, kv_heads, q_tiles, blocks):
    return max(1, min(SMS // (batch * kv_heads * q_tiles), 128, blocks))


def flashinfer(batch, kv_heads, kv_len):
    if batch * kv_heads >= SMS:
        return 1
    lo, hi = 128, kv_len  # the smallest chunk whose batch x kv heads x chunks fit the SMs
    while lo < hi:
        mid = (lo + hi) // 2
        if batch * kv_heads * math.ceil(kv_len / mid) <= SMS:
            hi = mid
        else:
            lo = mid + 1
    return math.ceil(kv_len / lo)


def kgen_splits(kgen, folder, batch, q_heads, kv_heads, q_len, kv_len):
    spec = {"name": "split_probe", "kind": "attention_decode",
            "shape": {"batch": batch, "q_heads": q_heads, "kv_heads": kv_heads, "q_len": q_len,
                      "kv_len": kv_len, "head_dim": 128},
            "dtype": "bfloat16", "targets": {"sm90a": {"block_kv": BLOCK_KV}}}
    path = os.path.join(folder, "probe.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    plan = json.loads(subprocess.run([kgen, "plan", path, "--target", "sm90a"], check=True, capture_output=True,
                                     text=True).stdout)
    return plan["splits"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kgen", default="build/generator/kgen")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--differing", action="store_true", help="list only the shapes where the rules differ")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for q_heads, kv_heads in ((32, 8), (32, 32), (64, 8)):
            for q_len in (1, 16):
                for batch in (1, 2, 4, 8, 16, 64):
                    for kv_len in (8192, 131072):
                        group = q_heads // kv_heads
                        q_tiles = math.ceil(group * q_len / ROWS)
                        blocks = kv_len // BLOCK_KV
                        rows.append((q_heads, kv_heads, q_len, batch, kv_len,
                                     kgen_splits(args.kgen, folder, batch, q_heads, kv_heads, q_len, kv_len),
                                     fa3(batch, kv_heads, q_tiles, blocks), fa4(batch, kv_heads, q_tiles, blocks),
                                     flashinfer(batch, kv_heads, kv_len)))
    header = ("heads q/kv", "q_len", "batch", "kv_len", "kgen", "FA3", "FA4", "FlashInfer")
    same = {name: sum(r[5] == r[k] for r in rows) for k, name in ((6, "FA3"), (7, "FA4"), (8, "FlashInfer"))}
    print(f"{len(rows)} shapes; kgen's choice equals " +
          ", ".join(f"{name}'s on {count}" for name, count in same.items()) +
          ("; the shapes where any rule differs:" if args.differing else ""))
    if args.differing:
        rows = [r for r in rows if len(set(r[5:])) > 1]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    else:
        print("  ".join(f"{h:>10}" for h in header))
    for q_heads, kv_heads, q_len, batch, kv_len, *splits in rows:
        cells = (f"{q_heads}/{kv_heads}", q_len, batch, kv_len, *splits)
        if args.markdown:
            print("| " + " | ".join(str(c) for c in cells) + " |")
        else:
            print("  ".join(f"{c!s:>10}" for c in cells))


if __name__ == "__main__":
    main()
