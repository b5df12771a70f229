#!/usr/bin/env python3
"""Conformance of `kgen plan SPEC --target tpu` with JAX Splash Attention's MaskInfo.

docs/spec-format.md §4 says the tpu block plan must equal the forward MaskInfo that
Splash's `process_mask` builds (head_shards = 1, q_seq_shards = 1, shrink_grid = True, no
downcast); §7 says `--pass dkv` must equal what `process_mask_dkv` builds with the same
arguments. This script generates random specs, runs kgen on each, builds the same mask
from Splash's own mask classes, calls Splash's `process_mask` (or `process_mask_dkv`) and
compares every array.

    splash_plan_conformance.py KGEN [SEED] [COUNT] [--pass forward|dkv] [--plant-bug]
                               [--keep-failures DIR]

With --pass dkv every spec says "backward": true and sets targets.tpu.backward to the
drawn tiles, while its forward tiles are the whole sequence (one tile): a kgen that
planned the dkv pass at the forward tiles fails.

Without --plant-bug it prints one line per failing case and ends with
`conformance: N passed, M failed`; the exit status is non-zero on any failure or when
fewer than COUNT cases were compared. With --plant-bug it runs the same cases, alters
kgen's plan in several ways before the comparison and fails unless the comparison
catches every alteration (the proof that the checker can fail).

What is compared (docs/spec-format.md §4):
  - grid == [batch, q_heads, q_blocks, width] (dkv: [batch, kv_blocks, q_heads, height]),
    block_q, block_kv, target, pass;
  - block_mask and data_next, always;
  - mask_next and partial_blocks, whenever kgen prints them (not null);
  - kgen's mask_next/partial_blocks are null exactly when the mask is a predicate the
    kernel evaluates (causal, local, chunked_causal, prefix_lm, full, and/or of those,
    one mask for all heads) or when no tile of any head is partial. When they are null,
    Splash's mask_next/partial_mask_blocks are not compared: Splash either has a
    mask_function (the same situation) or materializes a predicate kgen evaluates;
  - live_blocks and total_blocks against Splash's unshrunk block classification.
"""

from __future__ import annotations

import argparse
import collections
import copy
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as mask_lib
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask_info as mask_info_lib

PREDICATE_TYPES = {"causal", "local", "chunked_causal", "prefix_lm", "full"}
SCENARIOS = [
    "causal", "local", "chunked_causal", "prefix_lm", "full", "explicit_rows",
    "explicit_npy", "composition", "per_head_shared", "per_head_distinct",
    "per_head_repeated",
]
# Features every default-sized run must have compared at least once.
REQUIRED_FEATURES = [
    "causal offset>0", "causal offset=0", "causal offset<0", "local left=null",
    "local right=null", "local both null", "local bounded", "local offset!=0",
    "chunked_causal", "prefix_lm", "full", "full (mask omitted)", "explicit rows",
    "explicit npy", "and", "or", "nested depth 2", "per_head shared",
    "per_head distinct", "per_head repeated", "per_head explicit dedup by content",
    "rectangular q_len<kv_len", "rectangular q_len>kv_len", "float32", "bfloat16",
    "mask_next compared", "mask_next null (predicate)", "mask_next null (no partial tile)",
    "shrunk grid", "unshrunk grid",
]
# And with --pass dkv: a kv block with fewer live q blocks than the longest, whose padding
# Splash puts before its live steps.
REQUIRED_DKV_FEATURES = ["dkv q steps padded at the start"]


class Skip(Exception):
    """The drawn case says nothing about kgen (see build_oracle); draw another one."""


# ----------------------------------------------------------------------------------
# Random specs
# ----------------------------------------------------------------------------------

@dataclass
class Case:
    spec: dict                      # the spec JSON, with "npy" paths relative to its folder
    files: dict                     # npy file name -> bool array
    features: set


class SpecGenerator:
    def __init__(self, rng: random.Random):
        self.rng = rng

    # ---- shapes ----
    def shape(self, dkv: bool = False):
        r = self.rng
        dtype = r.choice(["float32", "bfloat16"])
        step = 8 if dtype == "float32" else 16
        # The dkv kernel puts q on lanes: its block_q is a multiple of 128 (docs/backward.md).
        block_q = r.choice([b for b in (8, 16, 32, 64, 128, 256) if b % (128 if dkv else step) == 0])
        block_kv = r.choice([128, 128, 256, 512])
        q_len = block_q * r.randint(1, min(16, 1024 // block_q))
        kv_len = block_kv * r.randint(1, 1024 // block_kv)
        return dtype, block_q, block_kv, q_len, kv_len

    # ---- leaves ----
    def causal(self, q_len, kv_len, feats):
        r = self.rng
        pick = r.random()
        if pick < 0.35:
            offset = 0
        elif pick < 0.7:
            offset = r.randint(1, kv_len + 64)
        else:
            offset = -r.randint(1, q_len + 16)
        feats.add("causal offset" + (">0" if offset > 0 else "=0" if offset == 0 else "<0"))
        m = {"type": "causal", "offset": offset}
        if offset == 0 and r.random() < 0.5:
            del m["offset"]  # the default
        return m

    def local(self, q_len, kv_len, feats):
        r = self.rng
        span = max(q_len, kv_len)

        def side():
            if r.random() < 0.3:
                return None
            return r.choice([0, r.randint(0, 64), r.randint(0, span), r.randint(0, 2 * span)])

        left, right = side(), side()
        offset = 0 if r.random() < 0.4 else r.randint(-q_len, kv_len)
        if left is None and right is None:
            feats.add("local both null")
        elif left is None:
            feats.add("local left=null")
        elif right is None:
            feats.add("local right=null")
        else:
            feats.add("local bounded")
        if offset:
            feats.add("local offset!=0")
        m = {"type": "local", "left": left, "right": right, "offset": offset}
        if offset == 0 and r.random() < 0.5:
            del m["offset"]
        return m

    def chunked_causal(self, q_len, kv_len, feats):
        r = self.rng
        feats.add("chunked_causal")
        chunk = r.choice([r.randint(1, 16), r.randint(1, max(q_len, kv_len)),
                          r.choice([64, 128, 256, 512]), r.randint(1, 3 * max(q_len, kv_len))])
        return {"type": "chunked_causal", "chunk": chunk}

    def prefix_lm(self, q_len, kv_len, feats):
        feats.add("prefix_lm")
        return {"type": "prefix_lm", "prefix": self.rng.choice([0, self.rng.randint(0, kv_len + 8)])}

    def full(self, q_len, kv_len, feats):
        feats.add("full")
        return {"type": "full"}

    def predicate(self, q_len, kv_len, feats):
        kind = self.rng.choice(["causal", "local", "chunked_causal", "prefix_lm", "full"])
        return getattr(self, kind)(q_len, kv_len, feats)

    # ---- explicit bit patterns ----
    def pattern(self, q_len, kv_len, block_q, block_kv):
        """A random [q_len, kv_len] bool array with block structure: empty, full and
        partial tiles, repeated partial tiles (deduplication), BigBird-like layouts."""
        r = self.rng
        nr = np.random.default_rng(r.getrandbits(32))
        kind = r.choice(["block_sparse", "block_sparse", "bigbird", "documents", "random"])
        if kind == "block_sparse":
            # Cells at the plan's tile size or a finer / coarser / misaligned one.
            gq = r.choice([block_q, block_q, max(1, block_q // 2), 2 * block_q, r.randint(1, block_q)])
            gk = r.choice([block_kv, block_kv, block_kv // 2, 2 * block_kv, r.randint(1, block_kv)])
            templates = [nr.random((gq, gk)) < r.random() for _ in range(r.randint(1, 3))]
            tri = np.tril(np.ones((gq, gk), dtype=bool))
            out = np.zeros((q_len, kv_len), dtype=bool)
            weights = [r.random() for _ in range(5)]
            for qi in range(0, q_len, gq):
                for kj in range(0, kv_len, gk):
                    choice = r.choices(range(5), weights)[0]
                    if choice == 0:
                        cell = np.zeros((gq, gk), dtype=bool)
                    elif choice == 1:
                        cell = np.ones((gq, gk), dtype=bool)
                    elif choice == 2:
                        cell = r.choice(templates)
                    elif choice == 3:
                        cell = tri
                    else:
                        cell = nr.random((gq, gk)) < 0.5
                    h, w = min(gq, q_len - qi), min(gk, kv_len - kj)
                    out[qi:qi + h, kj:kj + w] = cell[:h, :w]
            return out
        i = np.arange(q_len)[:, None]
        j = np.arange(kv_len)[None, :]
        if kind == "bigbird":
            g = r.choice([0, r.randint(1, 64)])
            w = r.randint(0, 256)
            centre = i * kv_len // q_len
            out = (np.abs(j - centre) <= w) | (i < g) | (j < g)
            qb, kb = q_len // block_q, kv_len // block_kv
            for qi in range(qb):
                for kj in nr.choice(kb, size=min(kb, r.randint(0, 3)), replace=False):
                    out[qi * block_q:(qi + 1) * block_q, kj * block_kv:(kj + 1) * block_kv] = True
            return out
        if kind == "documents":
            bounds = sorted(set(nr.integers(1, max(2, min(q_len, kv_len)), size=r.randint(0, 6))))
            qdoc = np.searchsorted(bounds, np.arange(q_len), side="right")
            kdoc = np.searchsorted(bounds, np.arange(kv_len), side="right")
            out = qdoc[:, None] == kdoc[None, :]
            return out & (i >= j) if r.random() < 0.5 else out
        return nr.random((q_len, kv_len)) < r.choice([0.001, 0.05, 0.5, 0.95])

    def explicit(self, ctx, feats, as_npy=None, bits=None):
        q_len, kv_len, block_q, block_kv, files = ctx
        if bits is None:
            bits = self.pattern(q_len, kv_len, block_q, block_kv)
        if as_npy is None:
            as_npy = self.rng.random() < 0.5
        if as_npy:
            feats.add("explicit npy")
            name = f"masks/m{len(files)}.npy"
            files[name] = bits
            return {"type": "explicit", "npy": name}
        feats.add("explicit rows")
        return {"type": "explicit", "rows": ["".join("1" if b else "0" for b in row) for row in bits]}

    # ---- compositions ----
    def leaf(self, ctx, feats, explicit_ok=True):
        q_len, kv_len = ctx[0], ctx[1]
        if explicit_ok and self.rng.random() < 0.25:
            return self.explicit(ctx, feats)
        return self.predicate(q_len, kv_len, feats)

    def composition(self, ctx, feats, depth=2, explicit_ok=True):
        r = self.rng
        op = r.choice(["and", "or"])
        feats.add(op)
        children = []
        for _ in range(r.randint(1 if r.random() < 0.1 else 2, 3)):
            if depth > 1 and r.random() < 0.4:
                feats.add("nested depth 2")
                children.append(self.composition(ctx, feats, depth - 1, explicit_ok))
            else:
                children.append(self.leaf(ctx, feats, explicit_ok))
        return {"type": op, "masks": children}

    def any_mask(self, ctx, feats):
        r = self.rng.random()
        if r < 0.45:
            return self.predicate(ctx[0], ctx[1], feats)
        if r < 0.7:
            return self.explicit(ctx, feats)
        return self.composition(ctx, feats, depth=self.rng.randint(1, 2))

    # ---- whole specs ----
    def case(self, scenario: str, dkv: bool = False) -> Case:
        r = self.rng
        dtype, block_q, block_kv, q_len, kv_len = self.shape(dkv)
        q_heads = r.randint(1, 4)
        if scenario.startswith("per_head") and scenario != "per_head_shared":
            q_heads = r.randint(2, 4) if scenario == "per_head_distinct" else r.randint(3, 5)
        batch = r.randint(1, 3)
        files: dict = {}
        feats: set = set()
        ctx = (q_len, kv_len, block_q, block_kv, files)

        mask: dict | None
        if scenario in PREDICATE_TYPES:
            mask = getattr(self, scenario)(q_len, kv_len, feats)
            if scenario == "full" and r.random() < 0.4:
                mask = None
                feats.add("full (mask omitted)")
        elif scenario == "explicit_rows":
            mask = self.explicit(ctx, feats, as_npy=False)
        elif scenario == "explicit_npy":
            mask = self.explicit(ctx, feats, as_npy=True)
        elif scenario == "composition":
            mask = self.composition(ctx, feats, depth=2, explicit_ok=r.random() < 0.4)
        elif scenario == "per_head_shared":
            one = self.explicit(ctx, feats) if r.random() < 0.3 else self.any_mask(ctx, feats)
            heads = [copy.deepcopy(one) for _ in range(q_heads)]
            if one["type"] == "explicit" and q_heads > 1 and r.random() < 0.6:
                # The same bits under other file names or as rows: still one mask.
                bits = files[one["npy"]] if "npy" in one else np.array(
                    [[c == "1" for c in row] for row in one["rows"]], dtype=bool)
                heads = [one] + [self.explicit(ctx, feats, bits=bits) for _ in range(q_heads - 1)]
                feats.add("per_head explicit dedup by content")
            feats.add("per_head shared")
            mask = {"type": "per_head", "masks": heads}
        elif scenario == "per_head_distinct":
            feats.add("per_head distinct")
            mask = {"type": "per_head", "masks": [self.any_mask(ctx, feats) for _ in range(q_heads)]}
        else:  # per_head_repeated: a pool of two or three masks, some heads repeating
            feats.add("per_head repeated")
            pool = [self.any_mask(ctx, feats) for _ in range(r.randint(2, 3))]
            picks = [0, 1] + [r.randrange(len(pool)) for _ in range(q_heads - 2)]
            r.shuffle(picks)
            mask = {"type": "per_head", "masks": [copy.deepcopy(pool[k]) for k in picks]}

        if q_len < kv_len:
            feats.add("rectangular q_len<kv_len")
        elif q_len > kv_len:
            feats.add("rectangular q_len>kv_len")
        feats.add(dtype)
        spec = {
            "name": "conformance",
            "kind": "attention_forward",
            "shape": {"batch": batch, "q_heads": q_heads,
                      "kv_heads": r.choice([d for d in range(1, q_heads + 1) if q_heads % d == 0]),
                      "q_len": q_len, "kv_len": kv_len, "head_dim": r.choice([64, 128])},
            "dtype": dtype,
            "targets": {"tpu": {"generation": "v5e", "block_q": block_q, "block_kv": block_kv,
                                "block_kv_compute": block_kv}},
        }
        if dkv:
            spec["backward"] = True
            spec["targets"]["tpu"] = {
                "generation": "v5e", "block_q": q_len, "block_kv": kv_len,
                "backward": {"block_q": block_q, "block_kv": block_kv}}
        if mask is not None:
            spec["mask"] = mask
        return Case(spec, files, feats)


# ----------------------------------------------------------------------------------
# The oracle: the same mask in Splash's classes, and Splash's MaskInfo
# ----------------------------------------------------------------------------------

def explicit_bits(m: dict, files: dict, shape) -> np.ndarray:
    if "npy" in m:
        return files[m["npy"]]
    return np.frombuffer("".join(m["rows"]).encode(), dtype=np.uint8).reshape(shape) == ord("1")


def splash_mask(m: dict | None, shape, files: dict) -> mask_lib.Mask:
    """docs/spec-format.md §2's mask as a Splash mask object."""
    if m is None or m["type"] == "full":
        return mask_lib.FullMask(shape)
    t = m["type"]
    if t == "causal":
        return mask_lib.CausalMask(shape, offset=m.get("offset", 0))
    if t == "local":
        return mask_lib.LocalMask(shape, (m["left"], m["right"]), offset=m.get("offset", 0))
    if t == "chunked_causal":
        return mask_lib.ChunkedCausalMask(shape, chunk_size=m["chunk"])
    if t == "prefix_lm":
        # Splash has no prefix-LM class: materialize `j < P or i >= j`
        # (docs/spec-format.md §2).
        i = np.arange(shape[0])[:, None]
        j = np.arange(shape[1])[None, :]
        return mask_lib.NumpyMask((j < m["prefix"]) | (i >= j))
    if t == "explicit":
        return mask_lib.NumpyMask(explicit_bits(m, files, shape))
    if t in ("and", "or"):
        combine = mask_lib.LogicalAnd if t == "and" else mask_lib.LogicalOr
        out = splash_mask(m["masks"][0], shape, files)
        for child in m["masks"][1:]:
            out = combine(out, splash_mask(child, shape, files))
        return out
    raise ValueError(f"unknown mask type {t}")


def is_predicate(m: dict | None) -> bool:
    if m is None:
        return True
    if m["type"] in ("and", "or"):
        return all(is_predicate(c) for c in m["masks"])
    return m["type"] in PREDICATE_TYPES


def definition_key(m: dict, files: dict, shape) -> str:
    """SPEC-level identity of one head's mask: the definition, explicit leaves by
    content. Two heads with equal keys share one mask."""
    if m["type"] == "explicit":
        return "explicit:" + hashlib.sha1(np.packbits(explicit_bits(m, files, shape)).tobytes()).hexdigest()
    if m["type"] in ("and", "or"):
        return m["type"] + "(" + ",".join(definition_key(c, files, shape) for c in m["masks"]) + ")"
    norm = {"offset": 0} if m["type"] in ("causal", "local") else {}
    norm.update(m)
    return json.dumps(norm, sort_keys=True)


@dataclass
class Oracle:
    grid: list
    block_mask: np.ndarray
    data_next: np.ndarray
    mask_next: np.ndarray | None
    partial_blocks: np.ndarray | None
    expect_null_partials: bool     # docs/spec-format.md §4: kgen prints null mask_next/partial_blocks
    any_partial: bool              # some tile of some head is partial
    partial_tile_mask: str         # how kgen must say partial tiles are masked: none, predicate, bitmask
    live_blocks: int
    total_blocks: int


def plan_tiles(spec: dict) -> dict:
    """The tiles of the pass being compared: targets.tpu, or its backward section."""
    tpu = spec["targets"]["tpu"]
    return tpu.get("backward", tpu)


def build_oracle(case: Case, dkv: bool = False) -> Oracle:
    spec = case.spec
    s = spec["shape"]
    tpu = plan_tiles(spec)
    shape = (s["q_len"], s["kv_len"])
    heads = s["q_heads"]
    top = spec.get("mask")
    per_head = top["masks"] if top is not None and top["type"] == "per_head" else [top] * heads
    head_masks = tuple(splash_mask(m, shape, case.files) for m in per_head)
    multi = mask_lib.MultiHeadMask(head_masks)

    # Splash asserts (when shrinking) on a mask with no allowed entry at all.
    dense = multi[(slice(None), slice(None), slice(None))]
    if not dense.any():
        raise Skip("empty mask")
    # Splash tells heads apart by mask object equality; docs/spec-format.md §2 by
    # definition. They agree except where this script's stand-in for prefix_lm (a
    # NumpyMask) makes two different definitions equal objects, e.g. prefix 0 and
    # prefix 1. Such a spec says nothing about kgen, so draw another one rather than guess.
    if per_head[0] is not None:
        keys = {definition_key(m, case.files, shape) for m in per_head}
    else:
        keys = {"full"}
    if (len(keys) == 1) != (len(set(head_masks)) == 1):
        raise Skip("head sharing decided by the prefix_lm stand-in")
    shared = len(keys) == 1

    block = (tpu["block_q"], tpu["block_kv"])
    process = mask_info_lib.process_mask_dkv if dkv else mask_info_lib.process_mask
    info, _ = process(multi, block, downcast_smem_data=False,
                      head_shards=1, q_seq_shards=1, shrink_grid=True)
    full_info, _ = mask_info_lib.process_mask(multi, block, downcast_smem_data=False,
                                              head_shards=1, q_seq_shards=1, shrink_grid=False)
    q_blocks = s["q_len"] // block[0]
    kv_blocks = s["kv_len"] // block[1]
    classes = np.asarray(full_info.block_mask)
    assert classes.shape[1:] == (q_blocks, kv_blocks), classes.shape
    live_per_row = np.count_nonzero(classes.reshape(classes.shape[0], -1), axis=1)
    live = int(live_per_row.sum()) * (heads if classes.shape[0] == 1 else 1)
    batch = s.get("batch", 1)
    any_partial = bool((classes == 1).any())
    predicate = shared and is_predicate(per_head[0])
    block_mask = np.asarray(info.block_mask)
    return Oracle(
        grid=[batch, kv_blocks, heads, block_mask.shape[1]] if dkv
        else [batch, heads, block_mask.shape[1], block_mask.shape[2]],
        block_mask=block_mask,
        data_next=np.asarray(info.data_next),
        mask_next=None if info.mask_next is None else np.asarray(info.mask_next),
        partial_blocks=None if info.partial_mask_blocks is None else np.asarray(info.partial_mask_blocks),
        expect_null_partials=predicate or not any_partial,
        any_partial=any_partial,
        partial_tile_mask="none" if not any_partial else "predicate" if predicate else "bitmask",
        live_blocks=batch * live,
        total_blocks=batch * heads * q_blocks * kv_blocks,
    )


# ----------------------------------------------------------------------------------
# The comparison
# ----------------------------------------------------------------------------------

def first_difference(name: str, got, want) -> str | None:
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, Splash {list(want.shape)}"
    diff = np.argwhere(got != want)
    if diff.size:
        at = tuple(int(k) for k in diff[0])
        return f"{name}{list(at)}: kgen {got[at].item()}, Splash {want[at].item()} ({len(diff)} entries differ)"
    return None


def partial_blocks_array(blocks, rows, cols) -> np.ndarray | str:
    """Forward blocks are block_q strings of block_kv bits; dkv ones the transpose."""
    if not isinstance(blocks, list) or not all(
            isinstance(b, list) and len(b) == rows and
            all(isinstance(row, str) and len(row) == cols for row in b) for b in blocks):
        return f"partial_blocks: not a list of {rows} strings of {cols} characters each"
    text = "".join("".join(b) for b in blocks)
    if text.strip("01"):
        return "partial_blocks: characters other than '0' and '1'"
    return (np.frombuffer(text.encode(), dtype=np.uint8) == ord("1")).reshape(len(blocks), rows, cols)


def compare(plan: dict, oracle: Oracle, block_q: int, block_kv: int, pass_name: str) -> str | None:
    """The first way kgen's plan differs from Splash's MaskInfo, or None."""
    for key, want in (("target", "tpu"), ("pass", pass_name), ("block_q", block_q),
                      ("block_kv", block_kv), ("grid", oracle.grid)):
        if plan.get(key) != want:
            return f"{key}: kgen {plan.get(key)!r}, expected {want!r}"
    for key in ("block_mask", "data_next"):
        try:
            got = np.asarray(plan.get(key), dtype=np.int64)
        except (TypeError, ValueError):
            return f"{key}: not a rectangular integer array"
        d = first_difference(key, got, getattr(oracle, key))
        if d:
            return d
    mask_next, partials = plan.get("mask_next"), plan.get("partial_blocks")
    if (mask_next is None) != (partials is None):
        return f"mask_next is {'null' if mask_next is None else 'set'} but partial_blocks is " \
               f"{'null' if partials is None else 'set'}"
    if plan.get("partial_tile_mask") != oracle.partial_tile_mask:
        return f"partial_tile_mask: kgen {plan.get('partial_tile_mask')!r}, expected {oracle.partial_tile_mask!r}"
    if (mask_next is None) != oracle.expect_null_partials:
        why = "a predicate mask shared by all heads, or no partial tile" if oracle.expect_null_partials \
            else "partial tiles of a materialized (explicit or per-head) mask"
        return f"mask_next: kgen {'null' if mask_next is None else 'set'}, expected " \
               f"{'null' if oracle.expect_null_partials else 'set'} ({why})"
    if mask_next is not None:
        if oracle.mask_next is None or oracle.partial_blocks is None:
            return "mask_next: kgen set, Splash has none"
        d = first_difference("mask_next", np.asarray(mask_next, dtype=np.int64), oracle.mask_next)
        if d:
            return d
        rows, cols = (block_kv, block_q) if pass_name == "dkv" else (block_q, block_kv)
        blocks = partial_blocks_array(partials, rows, cols)
        if isinstance(blocks, str):
            return blocks
        d = first_difference("partial_blocks", blocks, oracle.partial_blocks)
        if d:
            return d
    for key in ("live_blocks", "total_blocks"):
        if plan.get(key) != getattr(oracle, key):
            return f"{key}: kgen {plan.get(key)!r}, Splash {getattr(oracle, key)!r}"
    return None


# ----------------------------------------------------------------------------------
# Planted bugs: altered plans the comparison must reject
# ----------------------------------------------------------------------------------

def planted_bugs(plan: dict, rng: random.Random):
    """(description, altered plan) pairs, each differing from `plan` in one place."""

    def pick(table):
        r = rng.randrange(len(table))
        q = rng.randrange(len(table[r]))
        return r, q, rng.randrange(len(table[r][q]))

    out = []
    p = copy.deepcopy(plan)
    r, q, c = pick(p["data_next"])
    p["data_next"][r][q][c] += 1
    out.append((f"data_next[{r}][{q}][{c}] + 1", p))
    p = copy.deepcopy(plan)
    r, q, c = pick(p["block_mask"])
    p["block_mask"][r][q][c] = {0: 2, 1: 2, 2: 1}[p["block_mask"][r][q][c]]
    out.append((f"block_mask[{r}][{q}][{c}] flipped", p))
    p = copy.deepcopy(plan)
    p["grid"] = p["grid"][:3] + [p["grid"][3] + 1]
    out.append(("grid width + 1", p))
    p = copy.deepcopy(plan)
    p["live_blocks"] -= 1
    out.append(("live_blocks - 1", p))
    p = copy.deepcopy(plan)
    for row in p["data_next"][0]:
        row.append(0)
    out.append(("a column added to data_next", p))
    if plan["pass"] == "dkv" and len(plan["block_mask"]) == 1:
        # The forward's shrinking convention (padding after the live steps) applied to dkv.
        padded = [c for c in range(len(plan["block_mask"][0][0]))
                  if plan["block_mask"][0][0][c] == 0 and any(row[c] for row in plan["block_mask"][0])]
        if padded:
            p = copy.deepcopy(plan)
            c = rng.choice(padded)
            for key in ("block_mask", "data_next", "mask_next"):
                if p[key] is not None:
                    column = [row[c] for row in p[key][0]]
                    pad = next(k for k, v in enumerate(plan["block_mask"][0]) if v[c] != 0)
                    column = column[pad:] + column[:pad]
                    for row, v in zip(p[key][0], column):
                        row[c] = v
            out.append((f"dkv column {c} padded at the end", p))
    if plan["mask_next"] is not None:
        p = copy.deepcopy(plan)
        r, q, c = pick(p["mask_next"])
        p["mask_next"][r][q][c] += 1
        out.append((f"mask_next[{r}][{q}][{c}] + 1", p))
        p = copy.deepcopy(plan)
        b = rng.randrange(len(p["partial_blocks"]))
        i = rng.randrange(len(p["partial_blocks"][b]))
        row = p["partial_blocks"][b][i]
        j = rng.randrange(len(row))
        p["partial_blocks"][b][i] = row[:j] + ("0" if row[j] == "1" else "1") + row[j + 1:]
        out.append((f"partial_blocks[{b}] bit ({i}, {j}) flipped", p))
        p = copy.deepcopy(plan)
        p["mask_next"] = p["partial_blocks"] = None
        out.append(("mask_next and partial_blocks dropped", p))
    else:
        p = copy.deepcopy(plan)
        p["mask_next"] = [[[0] * len(row) for row in rows] for rows in plan["block_mask"]]
        p["partial_blocks"] = [["0" * plan["block_kv"]] * plan["block_q"]]
        out.append(("mask_next and partial_blocks invented", p))
    return out


# ----------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------

def short_spec(spec: dict) -> str:
    """The spec on one line, explicit rows summarized (they can be a megabyte)."""

    def shorten(m):
        if isinstance(m, dict):
            if "rows" in m:
                digest = hashlib.sha1("".join(m["rows"]).encode()).hexdigest()[:12]
                return {**m, "rows": f"<{len(m['rows'])} rows, sha1 {digest}>"}
            return {k: shorten(v) for k, v in m.items()}
        if isinstance(m, list):
            return [shorten(v) for v in m]
        return m

    return json.dumps(shorten(spec), separators=(",", ":"))


def write_case(case: Case, folder: str) -> str:
    os.makedirs(os.path.join(folder, "masks"), exist_ok=True)
    for name, bits in case.files.items():
        np.save(os.path.join(folder, name), bits)
    path = os.path.join(folder, "spec.json")
    with open(path, "w") as f:
        json.dump(case.spec, f)
    return path


def run_kgen(kgen: str, spec_path: str, pass_name: str) -> dict:
    done = subprocess.run([kgen, "plan", spec_path, "--target", "tpu", "--pass", pass_name],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"kgen exited {done.returncode}: {done.stderr.strip()[:500]}")
    return json.loads(done.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kgen", help="path to the kgen binary")
    ap.add_argument("seed", nargs="?", type=int, default=1)
    ap.add_argument("count", nargs="?", type=int, default=240)
    ap.add_argument("--pass", dest="pass_name", choices=["forward", "dkv"], default="forward",
                    help="the plan compared: the forward's (process_mask) or the dkv pass's "
                         "(process_mask_dkv)")
    ap.add_argument("--plant-bug", action="store_true",
                    help="alter kgen's plans and require the comparison to catch each change")
    ap.add_argument("--keep-failures", metavar="DIR",
                    help="copy each failing case's spec folder to DIR/case_<k>")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    gen = SpecGenerator(rng)
    start = time.monotonic()
    passed = failed = skipped = 0
    skip_reasons: collections.Counter = collections.Counter()
    feature_counts: collections.Counter = collections.Counter()
    caught = missed = 0
    with tempfile.TemporaryDirectory(prefix="kgen_conformance_") as tmp:
        k = 0
        while passed + failed < args.count:
            if skipped > 10 * args.count + 100:
                print(f"conformance: gave up after {skipped} skipped draws", file=sys.stderr)
                break
            scenario = SCENARIOS[(passed + failed) % len(SCENARIOS)]
            dkv = args.pass_name == "dkv"
            case = gen.case(scenario, dkv)
            k += 1
            try:
                oracle = build_oracle(case, dkv)
            except Skip as why:
                skipped += 1
                skip_reasons[str(why)] += 1
                continue
            folder = os.path.join(tmp, f"case_{k}")
            spec_path = write_case(case, folder)
            tpu = plan_tiles(case.spec)
            try:
                plan = run_kgen(args.kgen, spec_path, args.pass_name)
                problem = compare(plan, oracle, tpu["block_q"], tpu["block_kv"], args.pass_name)
            except (RuntimeError, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
                plan, problem = None, f"kgen: {e}"
            if problem is None:
                passed += 1
                feats = set(case.features)
                if plan["mask_next"] is not None:
                    feats.add("mask_next compared")
                elif oracle.any_partial:
                    feats.add("mask_next null (predicate)")
                else:
                    feats.add("mask_next null (no partial tile)")
                feats.add("shrunk grid" if oracle.block_mask.shape[0] == 1 else "unshrunk grid")
                if dkv and oracle.block_mask.shape[0] == 1 and (oracle.block_mask[0, 0] == 0).any():
                    feats.add("dkv q steps padded at the start")
                feature_counts.update(feats)
            else:
                failed += 1
                print(f"FAIL case {k} (seed {args.seed}, {scenario}): {problem}; spec: {short_spec(case.spec)}")
                if args.keep_failures:
                    shutil.copytree(folder, os.path.join(args.keep_failures, f"case_{k}"), dirs_exist_ok=True)
                continue
            if args.plant_bug:
                for what, altered in planted_bugs(plan, rng):
                    if compare(altered, oracle, tpu["block_q"], tpu["block_kv"], args.pass_name) is None:
                        missed += 1
                        print(f"MISSED planted bug in case {k}: {what}; spec: {short_spec(case.spec)}")
                    else:
                        caught += 1
            shutil.rmtree(folder)

    elapsed = time.monotonic() - start
    required = REQUIRED_FEATURES + (REQUIRED_DKV_FEATURES if args.pass_name == "dkv" else [])
    missing = [f for f in required if not feature_counts[f]]
    reasons = ", ".join(f"{n} {why}" for why, n in sorted(skip_reasons.items())) or "none"
    print(f"compared {passed + failed} cases in {elapsed:.1f} s; draws skipped: {reasons}")
    print(f"pass {args.pass_name}; passed cases per feature: " +
          ", ".join(f"{f} {feature_counts[f]}" for f in required))
    status = 0
    if args.count >= 240 and missing and not args.plant_bug:
        print("conformance: features never compared: " + ", ".join(missing))
        status = 1
    if args.plant_bug:
        print(f"planted bugs: {caught} caught, {missed} missed")
        if missed or caught == 0 or failed:
            status = 1
    print(f"conformance: {passed} passed, {failed} failed")
    if failed or passed + failed < args.count:
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
