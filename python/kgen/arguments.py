"""Checks a caller's arguments against the spec a folder was generated for, before anything
is traced or launched (docs/python.md, "Errors"). Each error names the argument, what was
found, what the spec fixed, and the `make gen` command that regenerates the kernels for
another shape or dtype. Framework-neutral: arrays need `.shape`, and the caller says how to
name an array's dtype."""
from __future__ import annotations

from typing import Any, Callable

from kgen.errors import ArgumentError
from kgen.generated_folder import GeneratedFolder

# The two layouts a front door accepts: "BNTH" ([batch, heads, length, head dim]) and "BTNH"
# ([batch, length, heads, head dim], jax.nn.dot_product_attention's and FlashAttention's).
# What each costs is the front door's to say: the tpu kernels read BNTH, so kgen.jax
# transposes BTNH; the sm90a launchers take strides, so kgen.torch passes either as it is.
LAYOUT_NAMES = ("BNTH", "BTNH")
INTEGER_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}
FLOAT_DTYPES = {"bfloat16", "float16", "float32", "float64"}


def dimension_names(tensor: str, layout: str) -> tuple[str, ...]:
  """The spec's names of q's, k's or v's dimensions, in `layout`'s order."""
  heads = "q_heads" if tensor == "q" else "kv_heads"
  length = "q_len" if tensor == "q" else "kv_len"
  dim = "head_dim_v" if tensor == "v" else "head_dim"
  return ("batch", heads, length, dim) if layout == "BNTH" else ("batch", length, heads, dim)


class ArgumentChecker:
  """The checks of `attention(q, k, v, *, segment_ids, sinks, layout)` for one folder."""

  def __init__(self, folder: GeneratedFolder, caller: str, layout_costs: dict[str, str]):
    assert tuple(layout_costs) == LAYOUT_NAMES
    self.folder = folder
    self.caller = caller  # how errors name the function: 'kgen.jax attention "splash"'
    self.layout_costs = layout_costs  # layout name -> what it costs, for the layout error

  def check(self, q, k, v, *, segment_ids, sinks, layout: str,
            dtype_name: Callable[[Any], str]) -> tuple[Any, Any] | None:
    """Raises ArgumentError on the first argument that does not fit; returns the segment ids
    as a (q_segment_ids, kv_segment_ids) pair, or None."""
    if layout not in LAYOUT_NAMES:
      choices = " or ".join(f'"{name}" ({why})' for name, why in self.layout_costs.items())
      raise self.error(f'layout: found {layout!r}; expected {choices}')
    signature = self.folder.signature
    for tensor, array in (("q", q), ("k", k), ("v", v)):
      self._check_tensor(tensor, array, layout)
      self._check_dtype(tensor, array, dtype_name)
    pair = self._segment_ids(segment_ids, dtype_name)
    self._sinks(sinks, dtype_name)
    return pair

  def _check_dtype(self, tensor, array, dtype_name) -> None:
    """Raises the error for q, k or v in a dtype other than the spec's."""
    found = dtype_name(array)
    expected = self.folder.signature.dtype
    if found != expected:
      raise self.error(
          f"{tensor}: found dtype {found}; the spec fixed {expected} (\"dtype\" in "
          f"{self.folder.spec}). Cast it, or for {found} kernels set \"dtype\" and "
          f"regenerate: {self.folder.regenerate}")

  def _check_tensor(self, tensor: str, array, layout: str) -> None:
    found = tuple(array.shape)
    expected = self._shape(tensor, layout)
    if found == expected:
      return
    names = ", ".join(dimension_names(tensor, layout))
    message = (f"{tensor}: found shape {found}; the spec fixed {expected} = [{names}] in layout "
               f"{layout} ({self.folder.spec})")
    other = next(name for name in LAYOUT_NAMES if name != layout)
    if found == self._shape(tensor, other):
      message += f'. That is the spec\'s shape in layout {other}: pass layout="{other}"'
    else:
      message += (f'. For another shape, change "shape" in {self.folder.spec} and regenerate: '
                  f"{self.folder.regenerate}")
    raise self.error(message)

  def _shape(self, tensor: str, layout: str) -> tuple[int, ...]:
    shape = self.folder.signature.shape
    return tuple(getattr(shape, name) for name in dimension_names(tensor, layout))

  def _segment_ids(self, segment_ids, dtype_name) -> tuple[Any, Any] | None:
    signature = self.folder.signature
    shape = signature.shape
    if not signature.segment_ids:
      if segment_ids is not None:
        raise self.error(
            f"segment_ids: found an argument; the spec has none ({self.folder.spec}). For "
            f'kernels that take them, set "segment_ids": true and regenerate: '
            f"{self.folder.regenerate}")
      return None
    if segment_ids is None:
      one = " or one [batch, q_len] array for both" if shape.q_len == shape.kv_len else ""
      raise self.error(
          f'segment_ids: found none; the spec fixed "segment_ids": true ({self.folder.spec}): '
          f"pass segment_ids=(q_segment_ids [batch, q_len], kv_segment_ids [batch, kv_len])"
          f"{one}, integers")
    if isinstance(segment_ids, (tuple, list)):
      if len(segment_ids) != 2:
        raise self.error(
            f"segment_ids: found a sequence of {len(segment_ids)}; expected (q_segment_ids, "
            "kv_segment_ids)")
      pair = tuple(segment_ids)
    elif shape.q_len != shape.kv_len:
      raise self.error(
          f"segment_ids: found one array, which serves both sides only when q_len == kv_len; "
          f"here q_len {shape.q_len} != kv_len {shape.kv_len}: pass segment_ids=(q_segment_ids, "
          "kv_segment_ids)")
    else:
      pair = (segment_ids, segment_ids)
    for name, array, length in (("q_segment_ids", pair[0], "q_len"),
                                ("kv_segment_ids", pair[1], "kv_len")):
      expected = (shape.batch, getattr(shape, length))
      if tuple(array.shape) != expected:
        raise self.error(
            f"segment_ids: {name} has shape {tuple(array.shape)}; the spec fixed {expected} = "
            f'[batch, {length}] ({self.folder.spec}). For another shape, change "shape" and '
            f"regenerate: {self.folder.regenerate}")
      if dtype_name(array) not in INTEGER_DTYPES:
        raise self.error(
            f"segment_ids: {name} has dtype {dtype_name(array)}; the kernels compare int32 ids "
            "(docs/spec-format.md §3): pass integers")
    return pair

  def _sinks(self, sinks, dtype_name) -> None:
    signature = self.folder.signature
    if not signature.sinks:
      if sinks is not None:
        raise self.error(
            f"sinks: found an argument; the spec has none ({self.folder.spec}). For kernels "
            f'that take them, set "sinks": true and regenerate: {self.folder.regenerate}')
      return
    expected = (signature.shape.q_heads,)
    if sinks is None:
      raise self.error(
          f'sinks: found none; the spec fixed "sinks": true ({self.folder.spec}): pass '
          f"sinks of shape {expected} = [q_heads], float32")
    if tuple(sinks.shape) != expected:
      raise self.error(
          f"sinks: found shape {tuple(sinks.shape)}; the spec fixed {expected} = [q_heads] "
          f"({self.folder.spec})")
    if dtype_name(sinks) not in FLOAT_DTYPES:
      raise self.error(f"sinks: found dtype {dtype_name(sinks)}; expected floating point "
                        "(the kernels read float32)")

  def error(self, message: str) -> ArgumentError:
    """An ArgumentError naming the caller (the front doors' own checks use it too)."""
    return ArgumentError(f"{self.caller}: {message}")


class DecodeArgumentChecker(ArgumentChecker):
  """The checks of `decode(q, k, v, kv_lens, *, page_table, sinks, layout)` for one decode
  folder (docs/decode.md, "kgen.jax"): q as the forward's; k and v in the kernel's own cache
  layout, a page pool [kv_heads, pages, page_size, head_dim] or a contiguous cache
  [batch, kv_heads, kv_len, head_dim] (the shapes `cache_shapes` gives, from the kernel's
  operands file: a cache is never transposed); kv_lens [batch] and, paged, the page table
  [batch, kv_len / page_size], integers."""

  def check_decode(self, q, k, v, kv_lens, *, page_table, sinks, layout: str,
                   cache_shapes: dict[str, tuple[int, ...]], cache_layout: str,
                   page_table_shape: tuple[int, ...] | None,
                   dtype_name: Callable[[Any], str], check_sinks: bool = True) -> None:
    if layout not in LAYOUT_NAMES:
      choices = " or ".join(f'"{name}" ({why})' for name, why in self.layout_costs.items())
      raise self.error(f"layout: found {layout!r}; expected {choices}")
    signature = self.folder.signature
    self._check_tensor("q", q, layout)
    for tensor, array in (("k", k), ("v", v)):
      if tuple(array.shape) != cache_shapes[tensor]:
        raise self.error(
            f"{tensor}: found shape {tuple(array.shape)}; the kernel reads {cache_layout} "
            f"{cache_shapes[tensor]} ({self.folder.spec}). The cache is passed in the kernel's "
            f"own layout, never transposed; for another shape, change the spec and regenerate: "
            f"{self.folder.regenerate}")
    for tensor, array in (("q", q), ("k", k), ("v", v)):
      self._check_dtype(tensor, array, dtype_name)
    self._integers("kv_lens", kv_lens, (signature.shape.batch,), "[batch]", dtype_name)
    if page_table_shape is None:
      if page_table is not None:
        raise self.error(
            f"page_table: found an argument; the spec's cache is contiguous ({self.folder.spec} "
            f'has no "paged"). For a paged cache, set "paged": {{"page_size": P}} and '
            f"regenerate: {self.folder.regenerate}")
    elif page_table is None:
      raise self.error(
          f'page_table: found none; the spec fixed "paged" ({self.folder.spec}): pass '
          f"page_table of shape {page_table_shape} = [batch, kv_len / page_size], int32")
    else:
      self._integers("page_table", page_table, page_table_shape,
                     "[batch, kv_len / page_size]", dtype_name)
    if check_sinks:
      self._sinks(sinks, dtype_name)

  def check_sinks(self, sinks, dtype_name: Callable[[Any], str]) -> None:
    """The sinks alone (the combine's argument)."""
    self._sinks(sinks, dtype_name)

  def _integers(self, name: str, array, expected: tuple[int, ...], names: str,
                dtype_name: Callable[[Any], str]) -> None:
    if tuple(array.shape) != expected:
      raise self.error(f"{name}: found shape {tuple(array.shape)}; the spec fixed {expected} = "
                       f"{names} ({self.folder.spec})")
    if dtype_name(array) not in INTEGER_DTYPES:
      raise self.error(f"{name}: found dtype {dtype_name(array)}; the kernels read int32: pass "
                       "integers")
