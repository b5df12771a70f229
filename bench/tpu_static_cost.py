#!/usr/bin/env python3
"""Static cost of a generated tpu kernel and of JAX's Splash kernel, from libtpu's bundles.

    .venv-libtpu/bin/python bench/tpu_static_cost.py SPEC.json [--generated DIR]
        [--kgen build/generator/kgen] [--no-splash] [--json FILE] [--keep-dumps DIR]
        [--record FILE | --check FILE]

Compiles the kgen kernel generated/<name>/<name>.tpu.mlir deviceless (a compile-only
TPU device of the spec's generation, as tests/mosaic_dialect/tpu_deviceless_compile.py
does) with libtpu's dumps on, then lowers JAX's own Splash kernel
(jax.experimental.pallas.ops.tpu.splash_attention) for the same shape, mask, softcap,
segment ids, sinks, GQA, tiles and lse output and compiles it the same way. For each
kernel it parses the final VLIW bundle listing (`*-final_bundles.txt`) and the per-bundle
unit use (`*-final_hlo-static-per-bundle-utilization.txt`), walks the grid-step loop
once per step kind with the branches decided from the step's indices and block-mask
value, and reports bundles per step kind, spill traffic, unit use on the full-tile path,
and a modeled kernel time and MFU. Nothing runs on a TPU: these are static estimates
from libtpu's compiler. How the listing is read: docs/tpu-static-cost.md.

--record FILE writes each kgen kernel's bundles and spills per full step; --check FILE
fails (exit status 1) when a kernel takes more than 2% more bundles per full step than
recorded, or spills more: the regression gate `make verify` runs (make tpu-bundles
records).
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Public Cloud TPU figures (docs.cloud.google.com/tpu/docs/v5e, /v6e): peak bf16 FLOP/s
# per chip (one TensorCore per chip) and the MXU's width. The MXU count per core is read
# from the listing (the MXU capacity of libtpu's static gap analysis), and the clock is
# derived: peak = MXUs x width^2 x 2 FLOP/cycle x clock.
GENERATIONS = {
    "v5e": {"peak_flops": 197e12, "mxu_width": 128, "topology": "v5e:1x1x1"},
    "v6e": {"peak_flops": 918e12, "mxu_width": 256, "topology": "v6e:1x1x1"},
}
DELAY_SLOTS = 4  # bundles after an sbr.rel that always execute (see the doc)
UNITS = ("MXU", "XLU", "VALU", "VPOP", "EUP", "VLOAD", "VLOAD:FILL", "VSTORE",
         "VSTORE:SPILL", "SALU")


# ---------------------------------------------------------------------------------------
# The listing


class Listing:
  """A final_bundles.txt listing: bundles, branches, regions, definitions."""

  ADDR = re.compile(r"^\s*(0x[0-9a-f]+|0)\s+(LB|LH|LE|PB|PF|CT)?:?\s*(>*)\s*\{")

  def __init__(self, path: str, util_path: str | None):
    self.path = path
    text = open(path, encoding="utf-8").read().split("\n")
    bundles = []
    cur = None
    for line in text:
      m = self.ADDR.match(line)
      if m:
        cur = {"addr": int(m.group(1), 16) if m.group(1) != "0" else 0,
               "marker": m.group(2) or "", "depth": len(m.group(3)), "text": line}
        bundles.append(cur)
      elif cur is not None:
        cur["text"] += "\n" + line
    for i, b in enumerate(bundles):
      assert b["addr"] == i, (path, i, b["addr"])
    self.bundles = bundles
    self.region_start = {}
    self.defs = {}        # ssa name -> (addr, instruction text)
    self.spill_st = {}    # spill slot -> [(addr, source ssa)]
    self.branches = {}    # addr -> (target region, predicate ssa or None, negated)
    for b in bundles:
      body, _, tail = b["text"].partition("}")
      # Bundle bodies hold /* */ comments with braces only in operand notes; split on ;;.
      body = b["text"][b["text"].index("{") + 1:b["text"].rindex("}")]
      tail = b["text"][b["text"].rindex("}") + 1:]
      for m in re.finditer(r"(?:Start|Start/End empty) region (\d+)", tail):
        self.region_start.setdefault(int(m.group(1)), b["addr"])
      insts = [s.strip() for s in body.split(";;") if s.strip()]
      b["insts"] = insts
      b["spill_ld"] = sum(1 for s in insts if re.search(r"= [vs]ld \[[a-z]+:\[#allocation\d+_spill", s))
      b["spill_st"] = sum(1 for s in insts if re.search(r"= [vs]st \[[a-z]+:\[#allocation\d+_spill", s))
      for s in insts:
        m = re.match(r"(%[a-z]?\d+(?:_[a-z]+\d+)?) = (.*)", s, re.S)
        if m:
          self.defs[m.group(1)] = (b["addr"], m.group(2))
          st = re.match(r"sst \[smem:\[#allocation(\d+)_spill\]\] (%\S+)", m.group(2))
          if st:
            self.spill_st.setdefault(st.group(1), []).append((b["addr"], st.group(2)))
          br = re.match(r"sbr\.rel (?:\((!?)(%p\S+?)\) )?target = \$region(\d+)", m.group(2))
          if br:
            self.branches[b["addr"]] = (int(br.group(3)), br.group(2), br.group(1) == "!")
    self.util = None
    if util_path and os.path.exists(util_path):
      rows = []
      started = False
      for line in open(util_path, encoding="utf-8"):
        if line.startswith("== UTILIZATION"):
          started = True
          continue
        if started and line.strip():
          rows.append([int(x) for x in line.split()])
      if len(rows) == len(bundles):
        self.util = rows
    self.capacity = {}
    if util_path and os.path.exists(util_path):
      lines = open(util_path, encoding="utf-8").read().split("\n")
      for i, line in enumerate(lines):
        if line.startswith("== CAPAC"):
          names = [n.strip() for n in lines[i + 1].split(",")]
          vals = [int(x) for x in lines[i + 2].split()]
          self.capacity = dict(zip(names, vals))
    self.smem_tables = self._smem_tables()

  def grid_ndim(self) -> int:
    """Rank of the kernel's grid, from the window notes' iteration_bounds."""
    for b in self.bundles:
      m = re.search(r"iteration_bounds: \(([0-9, ]*)\)", b["text"])
      if m:
        return len(m.group(1).split(","))
    raise RuntimeError(f"no iteration_bounds in {self.path}")

  def target_addr(self, region: int) -> int:
    return self.region_start[region]

  def _smem_tables(self) -> dict:
    """SMEM allocation -> (custom-call operand index, element bits) of the DMA'd tables."""
    operands = {}
    for name, (_, d) in self.defs.items():
      m = re.match(r"inlined_call_operand\.\w+ \[shape: ([a-z]+)(\d+)\[[^\]]*\], index: (\d+)", d)
      if m:
        operands[name] = (int(m.group(3)), int(m.group(2)))
    tables = {}
    for name, (_, d) in self.defs.items():
      m = re.match(r"dma\.\w+_to_smem /\*\w+=\*/(%\S+?),.*/\*smem=\*/(%\S+?),", d)
      if not m:
        continue
      src = m.group(1)
      for _ in range(8):
        if src in operands:
          break
        dd = self.defs.get(src, (0, ""))[1]
        r = re.search(r"(%s\d+_s\d+)", dd)
        if not r:
          break
        src = r.group(1)
      alloc = re.match(r"smov \[#allocation(\d+)\]", self.defs.get(m.group(2), (0, ""))[1])
      if src in operands and alloc:
        tables[alloc.group(1)] = operands[src]
    return tables


# ---------------------------------------------------------------------------------------
# Deciding branches: a tiny evaluator over the scalar definitions


class Evaluator:
  """Values of scalar registers and predicates at one grid step.

  env: {"grid": {dim: index}, "tile": block-mask value, "mask_operand": operand index of
  the block-mask table}. Unknown values are None."""

  def __init__(self, listing: Listing, env: dict):
    self.l = listing
    self.env = env
    self.unresolved = set()
    self.consulted = set()  # grid dimensions whose index a decided branch read
    self.loop = grid_loop(listing)[:2]  # (first, last) bundle of the grid-step loop

  def _operand(self, tok: str, at: int):
    tok = tok.strip()
    if re.fullmatch(r"-?\d+", tok):
      return int(tok) & 0xFFFFFFFF
    if tok.startswith("%"):
      return self.value(tok, at)
    return None

  def value(self, name: str, at: int, depth: int = 0):
    if depth > 40 or name not in self.l.defs:
      return None
    addr, d = self.l.defs[name]
    m = re.match(r"sld \[smem:\[#allocation(\d+)_spill\]\]", d)
    if m:
      stores = self.l.spill_st.get(m.group(1), [])
      before = [s for s in stores if s[0] < addr] or stores
      # A value the grid loop carries in a spill slot (stored before the loop and again inside
      # it, as a spilled step counter) holds its first step's value only at the first step:
      # at the step walked it is unknown.
      start, stop = self.loop
      if (before and start <= addr <= stop and before[-1][0] < start
          and any(start <= s[0] <= stop for s in stores)):
        return None
      return self.value(before[-1][1], addr, depth + 1) if before else None
    m = re.match(r"sld \[smem:\[#allocation(\d+)(?: \+ ([^\]]+))?\]", d)
    if m:
      table = self.l.smem_tables.get(m.group(1))
      if table and table[0] == self.env["mask_operand"]:
        t = self.env["tile"]
        # A word of a packed int8/int16 table holds the value in every lane: any byte
        # extraction the kernel does yields the tile value.
        return {32: t, 16: t * 0x00010001, 8: t * 0x01010101}.get(table[1], t)
      # Other int32 tables the step is walked with (the document ranges and the kv block
      # they are read at): a function of the word offset.
      values = self.env.get("tables", {}).get(table[0]) if table else None
      if values is None:
        return None
      offset = self._operand(m.group(2), addr) if m.group(2) else 0
      return None if offset is None else values(offset) & 0xFFFFFFFF
    m = re.search(r"iteration index, stage = \d+ iter bound = (\d+)", d)
    if m and d.startswith("sphi"):
      self.consulted.add(int(m.group(1)))
      return self.env["grid"].get(int(m.group(1)), 0)
    m = re.fullmatch(r"smov (\S+)(\s*/\*.*)?", d, re.S)
    if m and not m.group(1).startswith("("):
      return self._operand(m.group(1), addr)
    # A predicated move, `smov (P, kept), moved`: P ? moved : kept.
    m = re.match(r"smov \((!?)(%p\S+?), ([^)]+)\), ([^\s/]+)", d)
    if m:
      p = self.pred(m.group(2), depth + 1)
      if p is None:
        return None
      return self._operand(m.group(4) if p != (m.group(1) == "!") else m.group(3), addr)
    m = re.match(r"s(min|max)\.([us])32 ([^,]+), ([^\s/]+)", d)
    if m:
      a, b = self._operand(m.group(3), addr), self._operand(m.group(4), addr)
      if a is None or b is None:
        return None
      key = (lambda x: x - (1 << 32) if x >= 1 << 31 else x) if m.group(2) == "s" else (lambda x: x)
      return (min if m.group(1) == "min" else max)(a, b, key=key)
    m = re.match(r"s(add|sub|and|or|xor|shll|shrl|shra|mul)\.[us]32 ([^,]+), ([^\s/]+)", d)
    if m:
      a, b = self._operand(m.group(2), addr), self._operand(m.group(3), addr)
      if a is None or b is None:
        return None
      sa = a - (1 << 32) if a >= 1 << 31 else a
      op = m.group(1)
      r = {"add": a + b, "sub": a - b, "and": a & b, "or": a | b, "xor": a ^ b,
           "mul": a * b, "shll": a << (b & 31), "shrl": a >> (b & 31),
           "shra": sa >> (b & 31)}[op]
      return r & 0xFFFFFFFF
    return None

  def pred(self, name: str, depth: int = 0):
    if depth > 40 or name not in self.l.defs:
      return None
    addr, d = self.l.defs[name]
    m = re.match(r"scmp\.(eq|ne|lt|le|gt|ge)\.([su])32\.totalorder (?:\(!?%p[^)]+\),? )?([^,]+), ([^\s/]+)", d)
    if m:
      a, b = self._operand(m.group(3), addr), self._operand(m.group(4), addr)
      if a is None or b is None:
        return None
      if m.group(2) == "s":
        a = a - (1 << 32) if a >= 1 << 31 else a
        b = b - (1 << 32) if b >= 1 << 31 else b
      return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
              "ge": a >= b}[m.group(1)]
    m = re.match(r"pneg (%p\S+)", d)
    if m:
      v = self.pred(m.group(1), depth + 1)
      return None if v is None else not v
    # A guard, `(!%p) a, b`, as on the compares: the operation as if it ran.
    m = re.match(r"p(and|or|nand|nor) (?:\(!?%p[^)]+\),? )?(!?)(%p\S+?), (!?)(%p\S+)", d)
    if m:
      a, b = self.pred(m.group(3), depth + 1), self.pred(m.group(5), depth + 1)
      if a is None or b is None:
        return None
      a, b = a != (m.group(2) == "!"), b != (m.group(4) == "!")
      return {"and": a and b, "or": a or b, "nand": not (a and b),
              "nor": not (a or b)}[m.group(1)]
    return None


def loop_trip(listing: Listing, addr: int):
  """Trip count of the loop closed by the backward branch at addr: the N of its
  `scmp.ge counter, N /* loop exit test */` (counters start at 0)."""
  _, pred, _ = listing.branches[addr]
  d = listing.defs.get(pred, (0, ""))[1]
  m = re.match(r"scmp\.ge\.s32\.totalorder %\S+, (\d+) /\* loop exit test", d)
  return int(m.group(1)) if m else None


def grid_loop(listing: Listing):
  """(start, back-branch addr, trip) of the outermost loop: the grid-step loop."""
  back = [(listing.target_addr(t), a) for a, (t, _, _) in listing.branches.items()
          if listing.target_addr(t) <= a]
  start, addr = min(back, key=lambda x: (x[0], -x[1]))
  return start, addr, loop_trip(listing, addr)


def walk(listing: Listing, env: dict, unknown_taken: bool = False):
  """Bundles (and unit use, spills) executed by one trip of the grid-step loop."""
  start, stop, _ = grid_loop(listing)
  ev = Evaluator(listing, env)
  cost = {"bundles": 0, "spill_ld": 0, "spill_st": 0, "units": [0] * len(UNITS),
          "branches": []}
  counters = {}

  def account(i):
    b = listing.bundles[i]
    cost["bundles"] += 1
    cost["spill_ld"] += b["spill_ld"]
    cost["spill_st"] += b["spill_st"]
    if listing.util:
      for k, v in enumerate(listing.util[i]):
        cost["units"][k] += v

  pc = start
  for _ in range(10_000_000):
    account(pc)
    if pc not in listing.branches:
      pc += 1
      continue
    for k in range(1, DELAY_SLOTS + 1):
      account(pc + k)
    if pc == stop:
      break
    region, pred, neg = listing.branches[pc]
    target = listing.target_addr(region)
    if target <= pc:  # an inner loop's back branch
      trip = loop_trip(listing, pc) or 1
      n = counters.get(pc, 0) + 1
      if n < trip:
        counters[pc] = n
        pc = target
      else:
        counters[pc] = 0
        pc += DELAY_SLOTS + 1
      continue
    taken = ev.pred(pred) if pred else True
    if taken is None:
      taken = unknown_taken
      cost["branches"].append((pc, "unresolved"))
    elif neg:
      taken = not taken
    pc = target if taken else pc + DELAY_SLOTS + 1
  cost["consulted"] = ev.consulted
  return cost


def outside_loop(listing: Listing) -> int:
  start, stop, _ = grid_loop(listing)
  return start + (len(listing.bundles) - (stop + DELAY_SLOTS + 1))


# ---------------------------------------------------------------------------------------
# Compiling with the dumps


def find_kernel_listing(dump_dir: str, before: set, name_part: str | None = None) -> tuple[str, str | None]:
  """The final bundle listing of a Mosaic custom call among the new dump files: the one
  whose HLO name contains `name_part` (Splash's "splash_mha_dq"), else the largest."""
  found = []
  for path in sorted(glob.glob(os.path.join(dump_dir, "*-final_bundles.txt"))):
    if path in before:
      continue
    base = os.path.basename(path)
    if "-TLP-" in base or "<late-" in base or (name_part and name_part not in base):
      continue
    with open(path, encoding="utf-8") as f:
      head = f.read(20000)
    if "entry bundle" in head and "custom-call(" in head:
      util = glob.glob(path.replace("-final_bundles.txt", "").rsplit("-", 1)[0] +
                       "-*-final_hlo-static-per-bundle-utilization.txt")
      found.append((os.path.getsize(path), path, util[0] if util else None))
  if not found:
    raise RuntimeError(f"no custom-call bundle listing{' named ' + name_part if name_part else ''} in {dump_dir}")
  _, path, util = max(found)
  return path, util


def compile_only_device(topology: str):
  from jax.experimental import topologies  # pylint: disable=import-outside-toplevel
  return topologies.get_topology_desc(
      platform="tpu", topology_name=topology, chips_per_host_bounds=(1, 1, 1),
      num_slices=1, wrap=(False, False, False)).devices[0]


def compile_on(device, fn, args):
  import jax  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  from jax.sharding import Mesh, NamedSharding, PartitionSpec  # pylint: disable=import-outside-toplevel
  placed = NamedSharding(Mesh(np.array([device]), ("x",)), PartitionSpec())
  return jax.jit(fn, in_shardings=(placed,) * len(args)).lower(*args).compile()


# kgen's kernels of a spec: the file suffix of each (docs/naming.md).
KGEN_KERNELS = {"forward": "", "dq": ".dq", "dkv": ".dkv"}


def compile_kgen(spec_path: str, generated: str, device, dump_dir: str, kernel: str = "forward"):
  """Compiles generated/<name>/<name>.tpu[.dq|.dkv].mlir; (listing, utilization), module."""
  sys.path.insert(0, os.path.join(ROOT, "tests", "mosaic_dialect"))
  import check_real_mosaic as crm  # pylint: disable=import-outside-toplevel
  import tpu_deviceless_compile as tdc  # pylint: disable=import-outside-toplevel
  name = json.load(open(spec_path, encoding="utf-8"))["name"]
  stem = os.path.join(generated, name, f"{name}.tpu{KGEN_KERNELS[kernel]}")
  operands = crm.load_operands(stem + ".operands.json")
  fn, args = tdc.kernel_callable(stem + ".mlir", operands, None)
  before = set(glob.glob(os.path.join(dump_dir, "*")))
  compile_on(device, lambda *a: fn(*a), args)
  return find_kernel_listing(dump_dir, before), stem + ".mlir"


# ---------------------------------------------------------------------------------------
# Splash for a spec


def splash_mask(mask: dict, shape, spec_dir: str, q_heads: int):
  from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  t = mask.get("type", "full")
  if t == "full":
    return sm.FullMask(shape)
  if t == "causal":
    return sm.CausalMask(shape, offset=int(mask.get("offset", 0)))
  if t == "local":
    return sm.LocalMask(shape, window_size=(mask["left"], mask["right"]),
                        offset=int(mask.get("offset", 0)))
  if t == "chunked_causal":
    return sm.ChunkedCausalMask(shape, chunk_size=int(mask["chunk"]))
  if t == "prefix_lm":
    prefix = np.zeros(shape, dtype=np.bool_)
    prefix[:, :min(int(mask["prefix"]), shape[1])] = True
    return sm.LogicalOr(sm.CausalMask(shape), sm.NumpyMask(prefix))
  if t == "explicit":
    if "npy" in mask:
      arr = np.load(os.path.join(spec_dir, mask["npy"])).astype(np.bool_)
    else:
      arr = np.array([[c == "1" for c in r] for r in mask["rows"]], dtype=np.bool_)
    return sm.NumpyMask(arr)
  if t in ("and", "or"):
    parts = [splash_mask(m, shape, spec_dir, q_heads) for m in mask["masks"]]
    out = parts[0]
    for p in parts[1:]:
      out = sm.LogicalAnd(out, p) if t == "and" else sm.LogicalOr(out, p)
    return out
  if t == "per_head":
    return sm.MultiHeadMask([splash_mask(m, shape, spec_dir, q_heads) for m in mask["masks"]])
  raise ValueError(f"no Splash mask for mask type {t!r}")


def splash_block_sizes(tiles: dict, backward: bool, fused: bool = False):
  """Splash's BlockSizes: the forward's from tiles (block_q, block_kv, block_kv_compute); with
  `backward`, the dkv kernel's and (unless `fused`, where the dkv kernel computes dq too) the dq
  kernel's the same."""
  from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk  # pylint: disable=import-outside-toplevel
  bq, bkv = tiles["block_q"], tiles["block_kv"]
  bkvc = tiles.get("block_kv_compute") or bkv
  if not backward:
    return sk.BlockSizes(block_q=bq, block_kv=bkv, block_kv_compute=bkvc)
  return sk.BlockSizes(block_q=bq, block_kv=bkv, block_kv_compute=bkvc, block_q_dkv=bq, block_kv_dkv=bkv,
                       block_kv_dkv_compute=bkvc, block_q_dq=None if fused else bq,
                       block_kv_dq=None if fused else bkv, use_fused_bwd_kernel=fused)


def build_splash(spec: dict, spec_dir: str, tiles: dict | None = None, backward: bool = False,
                 fused: bool = False):
  """(kernel function, argument structs, SplashAttentionKernel, mask) for the spec, at the
  spec's tpu tiles or `tiles`. With `backward` the function is the vjp of the attention (q, k,
  v and the output's cotangent in; dq, dk, dv out): compiling it compiles Splash's forward
  with residuals, its dq and dkv kernels (or, `fused`, its dkv kernel that computes dq too)."""
  import jax  # pylint: disable=import-outside-toplevel
  import jax.numpy as jnp  # pylint: disable=import-outside-toplevel
  from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk  # pylint: disable=import-outside-toplevel
  from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm  # pylint: disable=import-outside-toplevel
  s = spec["shape"]
  h, lq = s["q_heads"], s["q_len"]
  hkv, lk = s.get("kv_heads", h), s.get("kv_len", lq)
  d = s["head_dim"]
  dv = s.get("head_dim_v", d)
  mask = splash_mask(spec.get("mask", {"type": "full"}), (lq, lk), spec_dir, h)
  if not isinstance(mask, sm.MultiHeadMask):
    mask = sm.MultiHeadMask([mask] * h)
  blocks = splash_block_sizes(tiles or spec["targets"]["tpu"], backward, fused)
  # The backward's forward saves its residuals itself; a forward alone writes lse as asked.
  lse = bool((spec.get("outputs") or {}).get("lse")) and not backward
  kernel = sk.make_splash_mha_single_device(
      mask, block_sizes=blocks, save_residuals=lse,
      attn_logits_soft_cap=spec.get("softcap"))
  dt = jnp.dtype(spec.get("dtype", "bfloat16"))
  b = s.get("batch", 1)
  args = [jax.ShapeDtypeStruct((b, h, lq, d), dt), jax.ShapeDtypeStruct((b, hkv, lk, d), dt),
          jax.ShapeDtypeStruct((b, hkv, lk, dv), dt)]
  if backward:
    args.append(jax.ShapeDtypeStruct((b, h, lq, dv), dt))
  seg = bool(spec.get("segment_ids"))
  sinks = bool(spec.get("sinks"))
  if seg:
    args += [jax.ShapeDtypeStruct((b, lq), jnp.int32), jax.ShapeDtypeStruct((b, lk), jnp.int32)]
  if sinks:
    args += [jax.ShapeDtypeStruct((h,), jnp.float32)]

  def one(q, k, v, *rest):
    rest = list(rest)
    segment_ids = sk.SegmentIds(q=rest.pop(0), kv=rest.pop(0)) if seg else None
    snk = rest.pop(0) if sinks else None
    return kernel(q, k, v, segment_ids=segment_ids, sinks=snk)

  axes = (0, 0, 0) + ((0, 0) if seg else ()) + ((None,) if sinks else ())

  def fn(q, k, v, *rest):
    return jax.vmap(one, in_axes=axes)(q, k, v, *rest)

  def vjp(q, k, v, do, *rest):
    _, pullback = jax.vjp(lambda q_, k_, v_: fn(q_, k_, v_, *rest), q, k, v)
    return pullback(do)

  return (vjp if backward else fn), args, kernel, mask


# ---------------------------------------------------------------------------------------
# The model


# The grid of each kernel, outermost first, as roles: "line" is the block the kernel walks
# along (a q block for the forward and dq, a kv block for dkv), "step" its kv or q steps.
# Size-1 dimensions keep their place (the listing's iteration bounds count them).
LAYOUTS = {
    "kgen": ("batch", "head", "line", "step"),          # forward, dq
    "kgen-dkv": ("batch", "line", "head", "step"),
    "splash": ("head", "line", "step"),                  # forward, dq (vmap adds batch in front)
    "splash-dkv": ("line", "head", "step"),
}


class StepCosts:
  """Cost of a grid step by (head, line, step, tile), memoized by the grid indices its path
  read: a step that agrees with a walked one on every index a decided branch of that walk
  read takes the same path, so it costs the same."""

  def __init__(self, listing: Listing, layout: tuple, mask_operand: int, documents=None):
    self.listing = listing
    ndim = listing.grid_ndim()
    self.dims = {role: ndim - len(layout) + k for k, role in enumerate(layout)}
    self.mask_operand = mask_operand
    self.documents = documents
    self.memo = {}
    self.walks = 0

  def __call__(self, head: int, line: int, step: int, tile: int, kind: str = "compare"):
    grid = {self.dims[r]: v for r, v in (("head", head), ("line", line), ("step", step))}
    for read, cost in self.memo.get((tile, kind), ()):
      if all(grid.get(d, 0) == v for d, v in read.items()):
        return cost
    cost = walk(self.listing, self.env(grid, tile, kind))
    self.walks += 1
    self.memo.setdefault((tile, kind), []).append(({d: grid.get(d, 0) for d in cost["consulted"]}, cost))
    return cost

  def env(self, grid: dict, tile: int, kind: str = "compare") -> dict:
    env = {"grid": grid, "tile": tile, "mask_operand": self.mask_operand}
    if self.documents:
      env["tables"] = self.documents.tables(kind)
    return env


class DocumentSteps:
  """The tpu forward's document range tables (docs/block-plan.md, "Tiles skipped across
  documents") for the walk: each step kind as ranges the kernel reads, and, with `lengths`,
  each grid step's kind for documents of those lengths packed in order (as `kgen explain
  --document-lengths` packs them). Without lengths every live step compares ids, as a kernel
  without the skip does."""

  # (q min, q max), (kv min, kv max) of one step of each kind.
  KINDS = {"compare": ((0, 1), (0, 1)), "one_document": ((0, 0), (0, 0)), "dead": ((1, 1), (0, 0))}

  def __init__(self, operands: dict, plan: dict, spec: dict, lengths=None):
    import numpy as np  # pylint: disable=import-outside-toplevel
    names = [o["name"] for o in operands["scalar_prefetch"]]
    self.index = {name: names.index(name) for name in ("data_next", "q_block_ranges", "kv_block_ranges")}
    # SMEM pads a table's last dimension to 128 words: rows (min, max) of one batch row are
    # that far apart.
    self.row_words = {o["name"]: 128 * -(-o["shape"][-1] // 128) for o in operands["scalar_prefetch"]}
    self.data_next = np.asarray(plan["data_next"])
    self.lengths = tuple(lengths) if lengths else None
    self.q = self.kv = self.ids = None
    if lengths:
      s = spec["shape"]
      self.ids = (self._ids(lengths, s["q_len"]), self._ids(lengths, s.get("kv_len", s["q_len"])))
      self.q = self._ranges(self.ids[0], plan["block_q"])
      self.kv = self._ranges(self.ids[1], plan["block_kv"])

  @staticmethod
  def _ids(lengths, length):
    import numpy as np  # pylint: disable=import-outside-toplevel
    ids, document = [], 0
    while len(ids) < length:
      ids += [document] * lengths[document % len(lengths)]
      document += 1
    return np.asarray(ids[:length])

  @staticmethod
  def _ranges(ids, block):
    per_block = ids.reshape(-1, block)
    return list(zip(per_block.min(axis=1), per_block.max(axis=1)))

  def tables(self, kind: str) -> dict:
    (q_min, q_max), (kv_min, kv_max) = self.KINDS[kind]
    def rows(name, low, high):
      words = self.row_words[name]
      return lambda offset: low if (offset // words) % 2 == 0 else high
    # The kv block a step reads its range at: any block, the ranges say the same of each.
    return {self.index["data_next"]: lambda offset: 0,
            self.index["q_block_ranges"]: rows("q_block_ranges", q_min, q_max),
            self.index["kv_block_ranges"]: rows("kv_block_ranges", kv_min, kv_max)}

  def kind(self, head: int, line: int, step: int) -> str:
    """The step's kind for the packed documents (document_step in generator/document_skips.h)."""
    if self.q is None:
      return "compare"
    row = self.data_next[head if self.data_next.shape[0] > 1 else 0]
    (q_min, q_max), (kv_min, kv_max) = self.q[line], self.kv[int(row[line, step])]
    if q_max < kv_min or kv_max < q_min:
      return "dead"
    return "one_document" if q_min == q_max == kv_min == kv_max else "compare"


def model(listing: Listing, block_mask, batch: int, heads: int, mask_operand: int,
          layout: tuple = LAYOUTS["kgen"], documents: DocumentSteps | None = None):
  """Modeled bundles of the whole kernel: outside the grid loop once, then one loop trip
  per grid step (its path from the block mask), plus the pipeline's extra trips.
  block_mask: [1 or heads][lines][steps]. Step kinds: full, partial, empty at a middle step
  of a middle line; first and last: a full tile at the first step of head 0 and at the last
  step of the last head (where an accumulator starts and is written). With `documents` (the
  forward with segment ids) these steps compare ids, and three more kinds are walked: a dead
  full step, and a full and a partial step inside one document; every grid step takes the kind
  `documents` gives it."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  bm = np.asarray(block_mask)
  lines, width = bm.shape[-2], bm.shape[-1]
  cost = StepCosts(listing, layout, mask_operand, documents)
  mid_line = 1 if lines >= 2 else 0
  mid = 1 if width >= 3 else 0
  kinds = {"full": cost(0, mid_line, mid, 2), "partial": cost(0, mid_line, mid, 1),
           "empty": cost(0, mid_line, mid, 0), "first": cost(0, mid_line, 0, 2),
           "last": cost(heads - 1, mid_line, width - 1, 2)}
  if documents:
    kinds.update({"dead": cost(0, mid_line, mid, 2, "dead"),
                  "one_document": cost(0, mid_line, mid, 2, "one_document"),
                  "one_document_partial": cost(0, mid_line, mid, 1, "one_document")})
  document_steps = {"compare": 0, "one_document": 0, "dead": 0}
  total = 0
  steps = 0
  counts = {0: 0, 1: 0, 2: 0}
  for h in range(heads):
    row = bm[h if bm.shape[0] > 1 else 0]
    for i in range(lines):
      for j in range(width):
        t = int(row[i, j])
        kind = documents.kind(h, i, j) if documents and t else "compare"
        total += cost(h, i, j, t, kind)["bundles"]
        counts[t] += 1
        if t:
          document_steps[kind] += 1
        steps += 1
  total *= batch
  steps *= batch
  counts = {k: v * batch for k, v in counts.items()}
  _, _, trip = grid_loop(listing)
  extra = (trip - steps) if trip else 0
  bubble = walk(listing, cost.env({}, 0), unknown_taken=True)["bundles"]
  total += max(extra, 0) * bubble + outside_loop(listing)
  return {"kinds": kinds, "total_bundles": total, "steps": steps, "trip": trip,
          "tiles": {"empty": counts[0], "partial": counts[1], "full": counts[2]},
          "document_steps": {k: v * batch for k, v in document_steps.items()} if documents else None,
          "extra_trips": extra, "bubble_bundles": bubble, "walks": cost.walks}


# FLOPs per (query, key) pair, over 2: the matmuls each kernel does per tile. The forward:
# q kᵀ (d) and p v (dv); dq: q kᵀ, do vᵀ, ds k; dkv: q kᵀ, do vᵀ, pᵀ do, dsᵀ q; Splash's fused
# dkv kernel also ds k for dq.
KERNEL_FLOPS = {
    "forward": lambda d, dv: d + dv,
    "dq": lambda d, dv: 2 * d + dv,
    "dkv": lambda d, dv: 2 * d + 2 * dv,
    "fused_dkv": lambda d, dv: 3 * d + 2 * dv,
}


def allowed_pairs(spec: dict, mask_obj, ids=None) -> int:
  """Allowed (query, key) pairs over every head and batch row; with `ids` (q ids, kv ids of
  each batch row) only those within one document."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  s = spec["shape"]
  lq = s["q_len"]
  lk = s.get("kv_len", lq)
  allowed = 0
  seen = {}
  for m in mask_obj.masks:
    key = id(m)
    if key not in seen:
      n = 0
      step = 1024
      for q0 in range(0, lq, step):
        block = m[q0:min(q0 + step, lq), 0:lk]
        if ids is not None:
          block = block & (ids[0][q0:q0 + step, None] == ids[1][None, :])
        n += int(np.count_nonzero(block))
      seen[key] = n
    allowed += seen[key]
  return allowed * s.get("batch", 1)


def useful_flops(spec: dict, mask_obj, kernel: str = "forward") -> float:
  """2 (d + dv) per allowed (query, key) pair per head and batch row (the forward's)."""
  s = spec["shape"]
  d = s["head_dim"]
  return 2.0 * KERNEL_FLOPS[kernel](d, s.get("head_dim_v", d)) * allowed_pairs(spec, mask_obj)


def summarize(name, listing, m, gen, spec, flops_useful, flops_tiles, tiles=None, kernel="forward"):
  """The figures of one kernel: bundles and spills per step kind, unit use, the MXU floor
  of its tile (`tiles`: its block_q and block_kv; default the spec's tpu tiles), the modeled
  time and MFU."""
  g = GENERATIONS[gen]
  mxus = listing.capacity.get("MXU")
  clock = g["peak_flops"] / (mxus * g["mxu_width"] ** 2 * 2)
  tiles = tiles or spec["targets"]["tpu"]
  s = spec["shape"]
  d = s["head_dim"]
  dv = s.get("head_dim_v", d)
  tile_flops = 2.0 * tiles["block_q"] * tiles["block_kv"] * KERNEL_FLOPS[kernel](d, dv)
  floor = tile_flops / (g["peak_flops"] / clock)
  time_s = m["total_bundles"] / clock
  full = m["kinds"]["full"]
  units = dict(zip(UNITS, full["units"])) if listing.util else {}
  out = {
      "kernel": name, "listing": os.path.basename(listing.path),
      "generation": gen, "mxus_per_core": mxus, "clock_hz": clock,
      "peak_flops": g["peak_flops"],
      "tiles": {k: tiles.get(k) for k in ("block_q", "block_kv", "block_kv_compute") if tiles.get(k)},
      "bundles_total_listing": len(listing.bundles),
      "grid_loop_trip": m["trip"], "grid_steps": m["steps"], "tile_counts": m["tiles"],
      "bundles_per_step": {k: v["bundles"] for k, v in m["kinds"].items()},
      "spills_per_step": {k: {"loads": v["spill_ld"], "stores": v["spill_st"]}
                          for k, v in m["kinds"].items()},
      "unresolved_branches": sorted({b for v in m["kinds"].values() for b in v["branches"]}),
      "full_step_unit_use": units,
      "full_step_unit_busy": {u: (units[u] / (listing.capacity.get(u, 1) * full["bundles"]))
                              for u in units} if units else {},
      "spill_slots_in_listing": len({s for b in listing.bundles
                                     for s in re.findall(r"#allocation(\d+)_spill", b["text"])}),
      "mxu_floor_cycles_per_tile": floor,
      "mxu_floor_share": floor / full["bundles"],
      "modeled_bundles": m["total_bundles"], "modeled_time_s": time_s,
      "flops_useful": flops_useful, "flops_live_tiles": flops_tiles,
      "mfu_useful": flops_useful / (time_s * g["peak_flops"]),
      "mfu_live_tiles": flops_tiles / (time_s * g["peak_flops"]),
  }
  return out


# ---------------------------------------------------------------------------------------
# Measuring a kernel


class Session:
  """Compiles kernels deviceless for the generations they name, with libtpu's dumps in one
  folder (LIBTPU_INIT_ARGS must be set by dump_environment before jax is imported)."""

  def __init__(self, dump: str, kgen: str):
    self.dump = dump
    self.kgen_binary = kgen
    self.devices = {}
    self.pairs = {}

  def device(self, gen: str):
    if gen not in self.devices:
      self.devices[gen] = compile_only_device(GENERATIONS[gen]["topology"])
    return self.devices[gen]

  def new_listing(self, compile_fn, name_part=None):
    """Runs compile_fn and returns the Listing it dumped; its dump files are removed."""
    jf = f"{self.dump}/jf"
    before = set(glob.glob(f"{jf}/*"))
    compile_fn()
    path, util = find_kernel_listing(jf, before, name_part)
    listing = Listing(path, util)
    return listing, set(glob.glob(f"{jf}/*")) - before

  def forget(self, files):
    for path in files:
      try:
        os.remove(path)
      except OSError:
        pass

  def useful(self, spec: dict, spec_dir: str, mask_obj, kernel: str, documents=None) -> float:
    """Useful FLOPs of `kernel`, the allowed pairs counted once per spec (with `documents`'
    packed documents, the pairs within one document)."""
    ids = documents.ids if documents else None
    key = (spec["name"], json.dumps(spec["shape"], sort_keys=True), json.dumps(spec.get("mask"), sort_keys=True),
           None if ids is None else documents.lengths)
    if key not in self.pairs:
      self.pairs[key] = allowed_pairs(spec, mask_obj, ids)
    s = spec["shape"]
    return 2.0 * KERNEL_FLOPS[kernel](s["head_dim"], s.get("head_dim_v", s["head_dim"])) * self.pairs[key]

  def kgen(self, spec_path: str, generated: str, kernel: str = "forward", keep: bool = False,
           document_lengths=None) -> dict:
    """kgen's `kernel` (forward, dq or dkv) of the spec as generated under `generated`."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    spec = json.load(open(spec_path, encoding="utf-8"))
    spec_dir = os.path.dirname(os.path.abspath(spec_path))
    gen = spec["targets"]["tpu"].get("generation", "v5e")
    s = spec["shape"]
    plan = json.loads(subprocess.run([self.kgen_binary, "plan", spec_path, "--target", "tpu", "--pass", kernel],
                                     check=True, capture_output=True, text=True).stdout)
    name = spec["name"]
    stem = os.path.join(generated, name, f"{name}.tpu{KGEN_KERNELS[kernel]}")
    listing, files = self.new_listing(
        lambda: compile_kgen(spec_path, generated, self.device(gen), f"{self.dump}/jf", kernel))
    ops = json.load(open(stem + ".operands.json", encoding="utf-8"))
    prefetch = [o["name"] for o in ops["scalar_prefetch"]]
    bm = np.asarray(plan["block_mask"])
    layout = LAYOUTS["kgen-dkv" if kernel == "dkv" else "kgen"]
    documents = (DocumentSteps(ops, plan, spec, document_lengths) if "q_block_ranges" in prefetch else None)
    m = model(listing, bm, s.get("batch", 1), s["q_heads"], prefetch.index("block_mask"), layout, documents)
    tiles = {"block_q": plan["block_q"], "block_kv": plan["block_kv"]}
    d = s["head_dim"]
    tile_flops = 2.0 * tiles["block_q"] * tiles["block_kv"] * KERNEL_FLOPS[kernel](d, s.get("head_dim_v", d))
    # Dead steps (documents that cannot meet) multiply nothing.
    dead = m["document_steps"]["dead"] if documents else 0
    live = (m["tiles"]["full"] + m["tiles"]["partial"] - dead) * tile_flops
    _, _, _, mask_obj = build_splash(spec, spec_dir)
    r = summarize("kgen" if kernel == "forward" else f"kgen-{kernel}", listing, m, gen, spec,
                  self.useful(spec, spec_dir, mask_obj, kernel, documents), live, tiles, kernel)
    r["spec"] = name
    if documents:
      r["document_steps"] = m["document_steps"]
      r["document_lengths"] = document_lengths
    # What the gate holds: the full step, or the partial step of a plan without full tiles
    # (its kernel carries no full-tile copy, so a "full" walk would take the partial path).
    r["gate_step"] = "full" if m["tiles"]["full"] else "partial"
    if not keep:
      self.forget(files)
    return r

  def splash(self, spec: dict, spec_dir: str, tiles: dict | None = None, backward: bool = False,
             fused: bool = False, keep: bool = False) -> list:
    """JAX's Splash for the spec at `tiles` (default the spec's): its forward; with
    `backward` its forward with residuals, dq and dkv kernels (or, `fused`, its fused dkv)."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    s = spec["shape"]
    gen = spec["targets"]["tpu"].get("generation", "v5e")
    tiles = tiles or spec["targets"]["tpu"]
    fn, args, kernel, mask_obj = build_splash(spec, spec_dir, tiles, backward, fused)
    jf = f"{self.dump}/jf"
    before = set(glob.glob(f"{jf}/*"))
    compile_on(self.device(gen), fn, args)
    files = set(glob.glob(f"{jf}/*")) - before
    lq, lk = s["q_len"], s.get("kv_len", s["q_len"])
    bq, bkv = tiles["block_q"], tiles["block_kv"]
    # Splash's pallas grids: forward and dq (heads, q blocks, width), dkv (kv blocks, heads,
    # q steps) (vmap over a batch > 1 adds a dimension in front); scalar prefetch
    # (data_next, block_mask, mask_next).
    parts = [("splash", "splash_mha_fwd", kernel.fwd_mask_info, "splash", "forward", (lq // bq, lk // bkv))]
    if backward:
      if fused:
        parts = [("splash-fused-dkv", "splash_mha_dkv", kernel.dkv_mask_info, "splash-dkv", "fused_dkv",
                  (lk // bkv, lq // bq))]
      else:
        parts += [("splash-dq", "splash_mha_dq", kernel.dq_mask_info, "splash", "dq", (lq // bq, lk // bkv)),
                  ("splash-dkv", "splash_mha_dkv", kernel.dkv_mask_info, "splash-dkv", "dkv", (lk // bkv, lq // bq))]
    rows = []
    for name, listing_name, info, layout, flops_kind, blocks in parts:
      path, util = find_kernel_listing(jf, before, listing_name)
      listing = Listing(path, util)
      bm = np.asarray(info.block_mask) if info.block_mask is not None else np.full((1,) + blocks, 2)
      m = model(listing, bm, s.get("batch", 1), s["q_heads"], 1, LAYOUTS[layout])
      d = s["head_dim"]
      tile_flops = 2.0 * bq * bkv * KERNEL_FLOPS[flops_kind](d, s.get("head_dim_v", d))
      live = (m["tiles"]["full"] + m["tiles"]["partial"]) * tile_flops
      r = summarize(name, listing, m, gen, spec, self.useful(spec, spec_dir, mask_obj, flops_kind), live,
                    {"block_q": bq, "block_kv": bkv, "block_kv_compute": tiles.get("block_kv_compute") or bkv},
                    flops_kind)
      r["spec"] = spec["name"]
      rows.append(r)
    if not keep:
      self.forget(files)
    return rows


def dump_environment(dump: str) -> None:
  """libtpu's dump flags and a host without a TPU; before jax is imported."""
  os.makedirs(dump, exist_ok=True)
  os.environ["LIBTPU_INIT_ARGS"] = (
      os.environ.get("LIBTPU_INIT_ARGS", "") +
      f" --xla_jf_dump_to={dump}/jf --xla_jf_dump_llo_text=true"
      f" --xla_mosaic_dump_to={dump}/mosaic --xla_jf_dump_llo_static_gaps=true")
  os.environ.setdefault("JAX_PLATFORMS", "cpu")
  os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
  os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")


# ---------------------------------------------------------------------------------------
# Reports


def ratios(rows):
  """kgen against Splash per spec: full-step bundles and modeled MFU, side by side."""
  by = {(r["spec"], r["kernel"]): r for r in rows}
  lines = ["| spec | generation | kgen full step | Splash full step | kgen ÷ Splash | "
           "kgen MFU (useful) | Splash MFU (useful) | kgen share of the MXU floor |",
           "|---|---|---|---|---|---|---|---|"]
  for (spec, kernel), k in by.items():
    s = by.get((spec, "splash"))
    if kernel != "kgen" or s is None:
      continue
    kf, sf = k["bundles_per_step"]["full"], s["bundles_per_step"]["full"]
    lines.append(f"| {spec} | {k['generation']} | {kf:,} | {sf:,} | {kf / sf:.2f}× | "
                 f"{100 * k['mfu_useful']:.1f}% | {100 * s['mfu_useful']:.1f}% | "
                 f"{100 * k['mxu_floor_cycles_per_tile'] / kf:.0f}% |")
  return "\n".join(lines)


def backward_ratios(rows):
  """kgen's dq + dkv against Splash's dq + dkv and its fused dkv, per full step and modeled."""
  by = {(r["spec"], r["kernel"]): r for r in rows}
  lines = ["| spec | generation | kgen dq + dkv full steps | Splash dq + dkv | Splash fused dkv | "
           "kgen ÷ Splash (two kernels) | kgen ÷ Splash fused | kgen modeled ÷ Splash modeled | "
           "kgen share of the MXU floor |",
           "|---|---|---|---|---|---|---|---|---|"]
  for (spec, kernel), dq in by.items():
    dkv, sdq, sdkv, fused = (by.get((spec, k)) for k in ("kgen-dkv", "splash-dq", "splash-dkv", "splash-fused-dkv"))
    if kernel != "kgen-dq" or dkv is None or sdq is None or sdkv is None:
      continue
    full = lambda r: r["bundles_per_step"]["full"]  # pylint: disable=unnecessary-lambda-assignment
    kgen_full, splash_full = full(dq) + full(dkv), full(sdq) + full(sdkv)
    floor = dq["mxu_floor_cycles_per_tile"] + dkv["mxu_floor_cycles_per_tile"]
    modeled = (dq["modeled_bundles"] + dkv["modeled_bundles"]) / (sdq["modeled_bundles"] + sdkv["modeled_bundles"])
    lines.append(f"| {spec} | {dq['generation']} | {kgen_full:,} | {splash_full:,} | "
                 f"{full(fused):,} | {kgen_full / splash_full:.2f}× | "
                 f"{kgen_full / full(fused) if fused else float('nan'):.2f}× | {modeled:.2f}× | "
                 f"{100 * floor / kgen_full:.0f}% |")
  return "\n".join(lines)


# The regression gate: what is recorded per kgen kernel, and how far it may move.
GATE_TOLERANCE = 0.02


def gate_name(row) -> str:
  """A kgen kernel's name in the gate: the spec for its forward, <spec>/dq and <spec>/dkv."""
  return row["spec"] + ("" if row["kernel"] == "kgen" else "/" + row["kernel"][len("kgen-"):])


def gate_figures(rows):
  figures = {}
  for r in rows:
    if not r["kernel"].startswith("kgen"):
      continue
    step = r.get("gate_step", "full")
    figures[gate_name(r)] = {"full_step_bundles": r["bundles_per_step"][step],
                             "full_step_spill_loads": r["spills_per_step"][step]["loads"],
                             "full_step_spill_stores": r["spills_per_step"][step]["stores"]}
    if step != "full":
      figures[gate_name(r)]["step"] = step
  return figures


def gate_failures(rows, recorded):
  """One line per regression: a kernel slower, or spilling more, than recorded."""
  failures = []
  for spec, now in gate_figures(rows).items():
    was = recorded.get(spec)
    if was is None:
      failures.append(f"{spec}: no recorded figures (make tpu-bundles records them)")
      continue
    if was.get("step", "full") != now.get("step", "full"):
      failures.append(f"{spec}: the {now.get('step', 'full')} step measured, the "
                      f"{was.get('step', 'full')} step recorded (make tpu-bundles records it)")
      continue
    limit = was["full_step_bundles"] * (1 + GATE_TOLERANCE)
    if now["full_step_bundles"] > limit:
      failures.append(f"{spec}: {now['full_step_bundles']:,} bundles per full step, recorded "
                      f"{was['full_step_bundles']:,} (+{100 * GATE_TOLERANCE:.0f}% allowed)")
    for key in ("full_step_spill_loads", "full_step_spill_stores"):
      if now[key] > was[key]:
        failures.append(f"{spec}: {key.replace('_', ' ')} {now[key]:,}, recorded {was[key]:,}")
  return failures


def markdown(rows):
  head = ("| spec | kernel | full | partial | empty | first (+) | last (+) | spill ld/st per "
          "full step | MXU floor / tile | modeled time | MFU (useful) | MFU (live tiles) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")
  lines = [head]
  for r in rows:
    b = r["bundles_per_step"]
    sp = r["spills_per_step"]["full"]
    lines.append(
        f"| {r['spec']} | {r['kernel']} | {b['full']:,} | {b['partial']:,} | {b['empty']:,} | "
        f"{b['first'] - b['full']:+,} | {b['last'] - b['full']:+,} | "
        f"{sp['loads']}/{sp['stores']} | {r['mxu_floor_cycles_per_tile']:,.0f} | "
        f"{r['modeled_time_s'] * 1e3:.3f} ms | {100 * r['mfu_useful']:.1f}% | "
        f"{100 * r['mfu_live_tiles']:.1f}% |")
  return "\n".join(lines)


def print_row(r) -> None:
  print(json.dumps({k: r[k] for k in ("spec", "kernel", "bundles_per_step", "modeled_time_s",
                                      "mfu_useful", "unresolved_branches", "document_steps")
                    if k in r}), flush=True)


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("spec", nargs="+")
  ap.add_argument("--generated", default=os.path.join(ROOT, "generated"))
  ap.add_argument("--kgen", default=os.environ.get("KGEN", os.path.join(ROOT, "build", "generator", "kgen")))
  ap.add_argument("--no-splash", action="store_true")
  ap.add_argument("--backward", action="store_true",
                  help="also the dq and dkv kernels of specs with \"backward\": true (and Splash's)")
  ap.add_argument("--json", help="write the results as JSON here")
  ap.add_argument("--keep-dumps", help="dump directory to keep (default: a temp dir)")
  ap.add_argument("--document-lengths",
                  help="L1,L2,...: model a forward with segment ids on documents of these lengths "
                       "packed in order (default: every live step compares ids)")
  gate = ap.add_mutually_exclusive_group()
  gate.add_argument("--record", help="write each kgen kernel's full-step figures here")
  gate.add_argument("--check", help="fail when a kgen kernel is worse than recorded here")
  args = ap.parse_args(argv)

  dump = args.keep_dumps or tempfile.mkdtemp(prefix="tpu_static_cost_")
  dump_environment(dump)
  import jax  # pylint: disable=import-outside-toplevel
  import libtpu  # pylint: disable=import-outside-toplevel

  session = Session(dump, args.kgen)
  rows = []
  for spec_path in args.spec:
    spec = json.load(open(spec_path, encoding="utf-8"))
    spec_dir = os.path.dirname(os.path.abspath(spec_path))
    kernels = ["forward"] + (["dq", "dkv"] if args.backward and spec.get("backward") else [])
    for kernel in kernels:
      lengths = [int(x) for x in args.document_lengths.split(",")] if args.document_lengths else None
      rows.append(session.kgen(spec_path, args.generated, kernel, keep=bool(args.keep_dumps),
                               document_lengths=lengths if kernel == "forward" else None))
      print_row(rows[-1])
    if not args.no_splash:
      rows += session.splash(spec, spec_dir, keep=bool(args.keep_dumps))
      print_row(rows[-1])
      if len(kernels) > 1:
        bwd = (spec["targets"]["tpu"].get("backward") or spec["targets"]["tpu"])
        tiles = {k: bwd.get(k) for k in ("block_q", "block_kv", "block_kv_compute")}
        for fused in (False, True):
          for r in session.splash(spec, spec_dir, tiles, backward=True, fused=fused, keep=bool(args.keep_dumps)):
            if r["kernel"] != "splash":  # the forward with residuals: measured above
              rows.append(r)
              print_row(r)

  for r in rows:
    if len(r["unresolved_branches"]) > 1:
      print(f"warning: {r['spec']}/{r['kernel']}: branches decided by default (not taken): "
            f"{r['unresolved_branches']}; only the pipeline guard is expected here",
            file=sys.stderr)
  print()
  print(f"jax {jax.__version__}, libtpu {libtpu.__version__}; static estimates from "
        "libtpu's bundle listings, nothing ran on a TPU")
  print(markdown(rows))
  if not args.no_splash:
    print()
    print(ratios(rows))
    if args.backward:
      print()
      print(backward_ratios(rows))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump({"jax": jax.__version__, "libtpu": libtpu.__version__, "dumps": dump,
                 "results": rows}, f, indent=2, default=str)
      f.write("\n")
  if args.record:
    with open(args.record, "w", encoding="utf-8") as f:
      json.dump({"libtpu": libtpu.__version__, "kernels": gate_figures(rows)}, f, indent=2,
                sort_keys=True)
      f.write("\n")
  if args.check:
    recorded = json.load(open(args.check, encoding="utf-8"))
    failures = gate_failures(rows, recorded["kernels"])
    if recorded["libtpu"] != libtpu.__version__:
      print(f"note: figures recorded with libtpu {recorded['libtpu']}, this is "
            f"{libtpu.__version__}", file=sys.stderr)
    for line in failures:
      print(f"tpu bundle gate: {line}", file=sys.stderr)
    failed = {line.split(":")[0] for line in failures}
    kernels = len(gate_figures(rows))
    print(f"tpu bundle gate: {kernels - len(failed)} of {kernels} kernels within their "
          "recorded figures")
    return 1 if failures else 0
  return 0


if __name__ == "__main__":
  sys.exit(main())
