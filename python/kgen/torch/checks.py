"""The arguments of a generated kernel, checked against its spec before anything runs.

A generated kernel has its spec's shapes, dtype and operands compiled in. Every error names
the argument, what was found and what the spec fixed, and for what only a new kernel can
change (shape, dtype, operands) the `make gen` command that regenerates it
(docs/front-doors.md, "Errors").

Layouts: `BNTH` ([batch, heads, tokens, head_dim], torch's SDPA and FlexAttention) and `BTNH`
([batch, tokens, heads, head_dim], FlashAttention's and jax.nn.dot_product_attention's).
The launchers take (batch, head, row) strides for every tensor, so both are passed as they
are: neither costs a copy. What the kernels need of a layout is a contiguous head_dim and
the other strides positive multiples of 8 elements (16 bytes, what TMA addresses); a size-1
dimension's stride is never read and is not checked.
"""
import torch

LAYOUTS = {"BNTH": ("batch", "heads", "tokens", "head_dim"), "BTNH": ("batch", "tokens", "heads", "head_dim")}
STRIDE_ELEMENTS = 8  # TMA: every stride a multiple of 16 bytes (docs/sm90a-kernel.md, "The launcher API")


class ArgumentError(ValueError):
    """An argument the generated kernel cannot take."""


def _shape(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def to_bnth(t, layout):
    """The [batch, heads, tokens, features] view of a tensor in `layout` (no copy); a swap of
    two axes, so it also turns a BNTH result back into `layout`."""
    return t if layout == "BNTH" else t.transpose(1, 2)


def kernel_readable(view):
    """Whether the launcher takes a [batch, heads, tokens, features] tensor's strides."""
    if view.stride(3) != 1 and view.size(3) != 1:
        return False
    return all(view.size(d) == 1 or (view.stride(d) > 0 and view.stride(d) % STRIDE_ELEMENTS == 0) for d in range(3))


class Checker:
    """The checks of one kernel's arguments; `interface` says what the spec fixed."""

    def __init__(self, interface):
        self.i = interface

    def _fail(self, text, regenerate=False):
        message = f"kgen.torch {self.i.name}: {text}"
        if regenerate:
            message += (f". The kernel in {self.i.folder} has what {self.i.spec} fixed: for another, change the "
                        f"spec and run `{self.i.regenerate}`")
        raise ArgumentError(message)

    def expected(self, name, layout):
        """The shape the spec fixes for operand `name` in `layout`, and what its axes are."""
        i = self.i
        bnth = {"q": ((i.batch, i.q_heads, i.q_len, i.head_dim), ("batch", "q_heads", "q_len", "head_dim")),
                "k": ((i.batch, i.kv_heads, i.kv_len, i.head_dim), ("batch", "kv_heads", "kv_len", "head_dim")),
                "v": ((i.batch, i.kv_heads, i.kv_len, i.head_dim_v), ("batch", "kv_heads", "kv_len", "head_dim_v"))}
        if name in bnth:
            shape, axes = bnth[name]
            order = (0, 1, 2, 3) if layout == "BNTH" else (0, 2, 1, 3)
            return tuple(shape[a] for a in order), tuple(axes[a] for a in order)
        return {"out": ((i.batch, i.q_heads, i.q_len, i.head_dim_v), ("batch", "q_heads", "q_len", "head_dim_v")),
                "dout": ((i.batch, i.q_heads, i.q_len, i.head_dim_v), ("batch", "q_heads", "q_len", "head_dim_v")),
                "lse": ((i.batch, i.q_heads, i.q_len), ("batch", "q_heads", "q_len")),
                "q_segment_ids": ((i.batch, i.q_len), ("batch", "q_len")),
                "kv_segment_ids": ((i.batch, i.kv_len), ("batch", "kv_len")),
                "sinks": ((i.q_heads,), ("q_heads",))}[name]

    def _tensor(self, name, t):
        if not isinstance(t, torch.Tensor):
            self._fail(f"{name} is a {type(t).__name__}, expected a torch.Tensor")

    def _shape_of(self, name, t, layout):
        shape, axes = self.expected(name, layout)
        if tuple(t.shape) != shape:
            where = f" ({layout}: {', '.join(axes)})" if layout else f" ({', '.join(axes)})"
            text = f"{name} has shape {_shape(t.shape)}, expected {_shape(shape)}{where}"
            other = next((o for o in LAYOUTS if o != layout), None) if layout else None
            if other and tuple(t.shape) == self.expected(name, other)[0]:
                self._fail(f"{text}: that is the spec's shape in layout {other}; pass layout=\"{other}\"")
            self._fail(text, regenerate=True)

    def _dtype_of(self, name, t, dtype, what, regenerate=False):
        if t.dtype != dtype:
            self._fail(f"{name} has dtype {t.dtype}, expected {dtype} ({what})", regenerate=regenerate)

    def _strides_of(self, name, t, layout):
        if not kernel_readable(to_bnth(t, layout)):
            self._fail(f"{name} has strides {tuple(t.stride())} for its shape {_shape(t.shape)} ({layout}); the kernel "
                       f"reads head_dim contiguous (stride 1) and the batch, heads and tokens strides as positive "
                       f"multiples of {STRIDE_ELEMENTS} elements (16 bytes, for TMA): pass t.contiguous()")

    def check(self, q, k, v, q_segment_ids=None, kv_segment_ids=None, sinks=None, layout="BNTH"):
        """Raises ArgumentError for the first argument the kernel cannot take."""
        if layout not in LAYOUTS:
            self._fail(f"layout {layout!r}, expected one of {', '.join(map(repr, LAYOUTS))}")
        i = self.i
        for name, t in (("q", q), ("k", k), ("v", v)):
            self._tensor(name, t)
            if t.dim() != 4:
                self._fail(f"{name} has {t.dim()} dimensions ({_shape(t.shape)}), expected 4 "
                           f"({layout}: {', '.join(self.expected(name, layout)[1])})")
            self._shape_of(name, t, layout)
            self._dtype_of(name, t, i.dtype, 'the spec\'s "dtype"', regenerate=True)
            self._strides_of(name, t, layout)
        if (q_segment_ids is None) != (kv_segment_ids is None):
            self._fail("segment ids come in pairs: give both q_segment_ids and kv_segment_ids")
        if i.segment_ids and q_segment_ids is None:
            self._fail(f"{i.spec} has segment_ids: pass segment_ids=(q_segment_ids, kv_segment_ids), int32 "
                       f"[batch, q_len] and [batch, kv_len]")
        if not i.segment_ids and q_segment_ids is not None:
            self._fail('segment ids given, but the spec has no "segment_ids": true', regenerate=True)
        if i.sinks and sinks is None:
            self._fail(f"{i.spec} has sinks: pass sinks, float32 [q_heads] = [{i.q_heads}]")
        if not i.sinks and sinks is not None:
            self._fail('sinks given, but the spec has no "sinks": true', regenerate=True)
        optional = (("q_segment_ids", q_segment_ids, torch.int32, "segment ids are int32"),
                    ("kv_segment_ids", kv_segment_ids, torch.int32, "segment ids are int32"),
                    ("sinks", sinks, torch.float32, "sinks are float32"))
        for name, t, dtype, what in optional:
            if t is None:
                continue
            self._tensor(name, t)
            self._shape_of(name, t, None)
            self._dtype_of(name, t, dtype, what)
        tensors = [("q", q), ("k", k), ("v", v)] + [(n, t) for n, t, _, _ in optional if t is not None]
        devices = {t.device for _, t in tensors}
        if len(devices) != 1:
            self._fail("the arguments are on different devices: " + ", ".join(f"{n} on {t.device}" for n, t in tensors))
        device = devices.pop()
        if device.type not in ("cpu", "cuda", "meta"):
            self._fail(f"the arguments are on {device}: kgen.torch runs CUDA tensors on the sm90a kernels and CPU "
                       f"tensors on the same kernels emulated (ptxemu)")

    def check_residuals(self, out, dout, lse):
        """The backward operator's other inputs: the forward's out and lse, and dout (BNTH)."""
        for name, t, dtype, what in (("out", out, self.i.dtype, "the forward's"), ("dout", dout, self.i.dtype,
                                     "out's gradient"), ("lse", lse, torch.float32, "the forward's lse")):
            self._tensor(name, t)
            self._shape_of(name, t, None)
            self._dtype_of(name, t, dtype, what)
        self._strides_of("out", out, "BNTH")

    def normalize(self, segment_ids, sinks):
        """What `attention` accepts beyond what the kernels take, made what they take: one
        segment-id tensor for both sides when q_len == kv_len, any integer ids (as int32), any
        floating-point sinks (as float32; the gradient flows back through the cast). Returns
        (q_segment_ids, kv_segment_ids, sinks)."""
        pair = (None, None)
        if isinstance(segment_ids, torch.Tensor):
            if self.i.q_len != self.i.kv_len:
                self._fail(f"segment_ids is one tensor, but q_len {self.i.q_len} != kv_len {self.i.kv_len}: pass "
                           f"segment_ids=(q_segment_ids, kv_segment_ids)")
            pair = (segment_ids, segment_ids)
        elif segment_ids is not None:
            if not isinstance(segment_ids, (tuple, list)) or len(segment_ids) != 2:
                self._fail(f"segment_ids is a {type(segment_ids).__name__}, expected a pair (q_segment_ids, "
                           f"kv_segment_ids)")
            pair = tuple(segment_ids)
        pair = tuple(t.to(torch.int32) if isinstance(t, torch.Tensor) and not t.is_floating_point()
                     and not t.is_complex() and t.dtype != torch.bool else t for t in pair)
        if isinstance(sinks, torch.Tensor) and sinks.is_floating_point():
            sinks = sinks.float()
        return pair[0], pair[1], sinks
