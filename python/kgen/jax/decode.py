"""`kgen.jax.load(folder)` of a decode spec ("kind": "attention_decode", docs/decode.md): the
generated tpu decode kernel, and for a split spec its combine, as JAX functions of the
caller's tensors.

The kernels take q packed per kv head: the `group` q heads of one kv head and the `q_len`
new tokens as the `group × q_len` rows of one tile, row r holding q head
`kv_head · group + r / q_len`, token `r % q_len` (docs/decode.md, "The tpu kernel"). In BNTH
([batch, q_heads, q_len, head_dim]) that packing is a reshape, so nothing is copied; the
results are unpacked the same way. The cache (a page pool or a contiguous cache) is passed
in the kernel's own layout and never copied. Both kernels run through KernelCall, as the
forward's do: a tpu_custom_call on a TPU, kgen's CPU executor on the CPU.
"""
from __future__ import annotations

import json

import jax.numpy as jnp

from kgen.arguments import DecodeArgumentChecker
from kgen.errors import ArgumentError
from kgen.generated_folder import GeneratedFolder
from kgen.jax import cpu_executor
from kgen.jax.kernel_call import KernelCall

LANES = 128  # lse, lse_s and sinks are lane-replicated: [..., rows, 128]
LAYOUT_COSTS = {
    "BNTH": "q [batch, q_heads, q_len, head_dim]: packed into the kernel's q tile by a "
            "reshape, no copy",
    "BTNH": "q [batch, q_len, q_heads, head_dim]: transposed to BNTH and back (one copy of q "
            "and out each way; the cache is never transposed)",
}


def _dtype_name(array) -> str:
  return jnp.dtype(array.dtype).name


class Decode:
  """`decode(q, k, v, kv_lens, *, page_table=None, sinks=None, return_lse=False,
  layout="BNTH")`.

  q [batch, q_heads, q_len, head_dim] in the spec's dtype (layout "BTNH": q_len before
  heads); k and v the page pools [kv_heads, pages, page_size, head_dim(_v)] of a paged spec
  or the contiguous cache [batch, kv_heads, kv_len, head_dim(_v)]; kv_lens [batch] int32, the
  valid cache positions of each sequence, its q_len new tokens included
  (q_len <= kv_lens[b] <= kv_len); page_table [batch, kv_len / page_size] int32 (paged);
  sinks [q_heads] (a spec with sinks). Returns out, shaped like q with head_dim_v last, and
  with return_lse (a spec whose "outputs" ask for lse) lse [batch, q_heads, q_len] f32.

  `partials` and `combine` are the split kernel and its combine on their own (split specs;
  `partials` also serves an unsplit spec that writes lse and has no sinks, as one part), and
  `across_devices` the body of a shard_map over a sharded cache
  (kgen.jax.decode_across_devices).
  """

  def __init__(self, folder: GeneratedFolder):
    self.folder = folder
    self.signature = folder.signature
    cpu_executor.register()
    self.kernel = KernelCall(folder, "")
    self.combine_kernel = (KernelCall(folder, "combine")
                           if folder.has("tpu", "kernel", "combine") else None)
    plan = json.loads(folder.file("tpu", "plan").read_text())
    self.splits: int = plan["splits"]
    self.block_kv: int = plan["block_kv"]
    self.page_size: int | None = plan.get("page_size")
    self.paged = "page_table" in self.kernel.prefetch
    s = self.signature.shape
    self.group = s.q_heads // s.kv_heads
    self.rows = self.group * s.q_len
    self.cache_shapes = {name: self.kernel.inputs[name] for name in ("k", "v")}
    self.page_table_shape = (s.batch, s.kv_len // self.page_size) if self.paged else None
    self.caller = f'kgen.jax decode "{folder.name}"'
    self._checker = DecodeArgumentChecker(folder, self.caller, LAYOUT_COSTS)

  def __repr__(self) -> str:
    return f"kgen.jax.load({str(self.folder.path)!r})"

  @property
  def split(self) -> bool:
    """Whether the kernel writes partials (out_s, lse_s) that the combine merges."""
    return self.combine_kernel is not None

  # --- the single-device front door -----------------------------------------------------

  def __call__(self, q, k, v, kv_lens, *, page_table=None, sinks=None,
               return_lse: bool = False, layout: str = "BNTH"):
    self.check(q, k, v, kv_lens, page_table=page_table, sinks=sinks, layout=layout)
    self.require_lse(return_lse)
    q = to_bnth(q, layout)
    sinks = None if sinks is None else jnp.asarray(sinks, jnp.float32)
    if self.split:
      out_s, lse_s = self.partials_bnth(q, k, v, kv_lens, page_table)
      out, lse = self._combine(out_s, lse_s, sinks)
    else:
      extras = {} if sinks is None else {"sinks": self._sink_rows(sinks)}
      results = self.kernel(q=self._pack(q), k=k, v=v, **self._prefetch(kv_lens, page_table),
                            **extras)
      out = self._unpack(results["out"])
      lse = self._unpack(results["lse"][..., 0]) if "lse" in results else None
    out = from_bnth(out, layout)
    return (out, from_bnth(lse, layout)) if return_lse else out

  def check(self, q, k, v, kv_lens, *, page_table=None, sinks=None, layout="BNTH",
            check_sinks: bool = True) -> None:
    """Raises kgen.ArgumentError on the first argument that does not fit the spec (sinks
    too unless check_sinks is False: the split kernel takes none, its combine does)."""
    self._checker.check_decode(
        q, k, v, kv_lens, page_table=page_table, sinks=sinks, layout=layout,
        check_sinks=check_sinks,
        cache_shapes=self.cache_shapes,
        cache_layout=("the page pool [kv_heads, pages, page_size, head_dim]" if self.paged else
                      "the contiguous cache [batch, kv_heads, kv_len, head_dim]"),
        page_table_shape=self.page_table_shape, dtype_name=_dtype_name)

  def require_lse(self, return_lse: bool) -> None:
    """Raises kgen.ArgumentError when lse is asked of a spec that writes none."""
    if return_lse and not self.signature.lse:
      raise self._checker.error(
          f'return_lse: the spec writes no lse; set "outputs": {{"lse": true}} in '
          f"{self.folder.spec} and regenerate: {self.folder.regenerate}")

  # --- the split kernel and the combine on their own ------------------------------------

  def partials(self, q, k, v, kv_lens, *, page_table=None, layout: str = "BNTH"):
    """The split kernel alone: (out_s [splits, batch, q_heads, q_len, head_dim_v],
    lse_s [splits, batch, q_heads, q_len]), f32, each part normalized by its own softmax
    sum, lse_s -inf (and out_s 0) for a row that kept nothing; no sink in any part
    (layout "BTNH": q_len before q_heads). An unsplit spec that writes lse and has no sinks
    gives its result as one part."""
    self.check(q, k, v, kv_lens, page_table=page_table, layout=layout, check_sinks=False)
    if not self.split and (self.signature.sinks or not self.signature.lse):
      finished = ("with its sinks already in it" if self.signature.sinks
                  else "without an lse to weigh it by")
      raise self._checker.error(
          f"partials: the spec is unsplit (splits 1), so its kernel writes the finished result "
          f'{finished}; set "splits" of targets.tpu to 2 or more in {self.folder.spec} and '
          f"regenerate: {self.folder.regenerate}")
    out_s, lse_s = self.partials_bnth(to_bnth(q, layout), k, v, kv_lens, page_table)
    return from_bnth(out_s, layout, leading=1), from_bnth(lse_s, layout, leading=1)

  def combine(self, out_s, lse_s, *, sinks=None, return_lse: bool = False,
              layout: str = "BNTH"):
    """The generated combine on `partials`' output: out (the spec's dtype) and, with
    return_lse, lse; the sinks join here, once."""
    if not self.split:
      raise self._checker.error(
          f"combine: the spec is unsplit (splits 1): it has no combine kernel "
          f"({self.folder.spec})")
    s = self.signature.shape
    expected = from_bnth_shape((self.splits, s.batch, s.q_heads, s.q_len), layout)
    for name, array, shape in (("out_s", out_s, (*expected, s.head_dim_v)),
                               ("lse_s", lse_s, expected)):
      if tuple(array.shape) != shape:
        raise self._checker.error(f"{name}: found shape {tuple(array.shape)}; expected {shape} "
                                  f"(partials' layout {layout})")
    self._checker.check_sinks(sinks, _dtype_name)
    self.require_lse(return_lse)
    out, lse = self._combine(to_bnth(out_s, layout, leading=1), to_bnth(lse_s, layout, leading=1),
                             None if sinks is None else jnp.asarray(sinks, jnp.float32))
    out = from_bnth(out, layout)
    return (out, from_bnth(lse, layout)) if return_lse else out

  # --- packing (BNTH throughout) --------------------------------------------------------

  def _prefetch(self, kv_lens, page_table) -> dict:
    tables = {"kv_lens": kv_lens}
    if self.paged:
      tables["page_table"] = page_table
    return tables

  def _pack(self, q):
    """[batch, q_heads, q_len, d] -> the kernel's [batch, kv_heads, group × q_len, d]."""
    b, _, _, d = q.shape
    return q.reshape(b, self.signature.shape.kv_heads, self.rows, d)

  def _unpack(self, x):
    """[batch, kv_heads, group × q_len, ...] -> [batch, q_heads, q_len, ...]."""
    s = self.signature.shape
    return x.reshape(x.shape[0], s.q_heads, s.q_len, *x.shape[3:])

  def _sink_rows(self, sinks):
    """sinks [q_heads] -> [kv_heads, rows, 128]: row r of kv head g holds the sink of q head
    g·group + r / q_len on every lane."""
    s = self.signature.shape
    rows = jnp.broadcast_to(sinks.reshape(s.kv_heads, self.group, 1),
                            (s.kv_heads, self.group, s.q_len))
    return jnp.broadcast_to(rows.reshape(s.kv_heads, self.rows, 1), (s.kv_heads, self.rows, LANES))

  def partials_bnth(self, q, k, v, kv_lens, page_table):
    """`partials` without the checks, in BNTH: q -> (out_s [splits, b, q_heads, q_len, dv],
    lse_s [splits, b, q_heads, q_len])."""
    s = self.signature.shape
    results = self.kernel(q=self._pack(q), k=k, v=v, **self._prefetch(kv_lens, page_table))
    if not self.split:  # an unsplit kernel's finished out and lse, as one part
      return (self._unpack(results["out"]).astype(jnp.float32)[None],
              self._unpack(results["lse"][..., 0])[None])
    # [b, kv_heads, splits, group × q_len, ...] -> [splits, b, q_heads, q_len, ...]
    def unpack(x):
      x = x.reshape(s.batch, s.kv_heads, self.splits, self.group, s.q_len, *x.shape[4:])
      x = jnp.moveaxis(x, 2, 0)
      return x.reshape(self.splits, s.batch, s.q_heads, s.q_len, *x.shape[5:])
    return unpack(results["out_s"]), unpack(results["lse_s"][..., 0])

  def _combine(self, out_s, lse_s, sinks):
    """BNTH partials -> (out, lse or None) by the generated combine."""
    s = self.signature.shape
    def pack(x):  # [splits, b, q_heads, q_len, ...] -> [b, kv_heads, splits, rows, ...]
      x = x.reshape(self.splits, s.batch, s.kv_heads, self.rows, *x.shape[4:])
      return jnp.moveaxis(x, 0, 2)
    lanes = jnp.broadcast_to(lse_s[..., None], (*lse_s.shape, LANES))
    extras = {} if sinks is None else {"sinks": self._sink_rows(sinks)}
    results = self.combine_kernel(out_s=pack(out_s.astype(jnp.float32)),
                                  lse_s=pack(lanes.astype(jnp.float32)), **extras)
    lse = results.get("lse")
    return self._unpack(results["out"]), None if lse is None else self._unpack(lse[..., 0])


def to_bnth(x, layout: str, leading: int = 0):
  """q-like [(...,) batch, q_len, heads, ...] (BTNH) -> [(...,) batch, heads, q_len, ...]."""
  return x if layout == "BNTH" or x is None else jnp.swapaxes(x, leading + 1, leading + 2)


def from_bnth(x, layout: str, leading: int = 0):
  return to_bnth(x, layout, leading)  # the same swap


def from_bnth_shape(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
  if layout == "BNTH":
    return shape
  return (*shape[:-2], shape[-1], shape[-2])

