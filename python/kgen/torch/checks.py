"""The arguments of a generated kernel, checked before anything runs (docs/front-doors.md,
"Errors").

What the spec fixed (shapes in either layout, dtype, segment ids, sinks) is checked by
kgen.arguments, the checks kgen.jax makes, so both front doors refuse the same mistakes with
the same words. What only PyTorch has is checked here: tensors rather than other objects,
strides the launchers can read, one device, and the backward operator's residuals.

The sm90a launchers take (batch, head, row) strides for every tensor, so BNTH and BTNH are
both passed as they are: neither costs a copy. What the kernels need of a layout is a
contiguous head_dim and the other strides positive multiples of 8 elements (16 bytes, what
TMA addresses); a size-1 dimension's stride is never read and is not checked.
"""
import torch

from kgen.arguments import ArgumentChecker

LAYOUT_COSTS = {
    "BNTH": "[batch, heads, tokens, head_dim], torch's SDPA and FlexAttention: no copy",
    "BTNH": "[batch, tokens, heads, head_dim], FlashAttention's: passed with its strides, no copy",
}
STRIDE_ELEMENTS = 8  # TMA: every stride a multiple of 16 bytes (docs/sm90a-kernel.md, "The launcher API")
# What the kernels take (what `normalize` converts to).
OPERAND_DTYPES = {"q_segment_ids": torch.int32, "kv_segment_ids": torch.int32, "sinks": torch.float32}


def _dtype(dtype):
    """torch.float16 -> "float16", the spec's and kgen.arguments' names."""
    return str(dtype).removeprefix("torch.")


def dtype_name(t):
    return _dtype(t.dtype)


def _shape(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


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
    """The checks of one kernel folder's arguments; `interface` says what the spec fixed."""

    def __init__(self, interface):
        self.i = interface
        self.spec = ArgumentChecker(interface.generated, f'kgen.torch attention "{interface.name}"', LAYOUT_COSTS)

    def _fail(self, text):
        raise self.spec.error(text)

    def call(self, q, k, v, segment_ids, sinks, layout):
        """`attention(q, k, v, segment_ids=..., sinks=..., layout=...)` as a user calls it;
        returns what the forward operator takes: (q_segment_ids, kv_segment_ids, sinks), ids as
        int32 and sinks as float32 (one id tensor serves both sides when q_len == kv_len)."""
        pairs = segment_ids if isinstance(segment_ids, (tuple, list)) else (segment_ids,)
        self._tensors((("q", q), ("k", k), ("v", v), ("sinks", sinks)) +
                      tuple(("segment_ids", t) for t in pairs))
        pair = self.spec.check(q, k, v, segment_ids=segment_ids, sinks=sinks, layout=layout, dtype_name=dtype_name)
        q_ids, kv_ids = pair if pair is not None else (None, None)
        self._placement(layout, q=q, k=k, v=v, q_segment_ids=q_ids, kv_segment_ids=kv_ids, sinks=sinks)
        # Any integer ids and any floating-point sinks (the gradient flows back through the cast).
        return tuple(None if t is None else t.to(OPERAND_DTYPES[name])
                     for name, t in (("q_segment_ids", q_ids), ("kv_segment_ids", kv_ids), ("sinks", sinks)))

    def operands(self, q, k, v, q_segment_ids, kv_segment_ids, sinks):
        """The forward and backward operators' own inputs (BNTH views, what the kernels take),
        for a caller of torch.ops.kgen.* directly."""
        operands = (("q_segment_ids", q_segment_ids), ("kv_segment_ids", kv_segment_ids), ("sinks", sinks))
        self._tensors((("q", q), ("k", k), ("v", v)) + operands)
        if (q_segment_ids is None) != (kv_segment_ids is None):
            self._fail("segment_ids: found one of q_segment_ids and kv_segment_ids; the operators take both or neither")
        pair = None if q_segment_ids is None else (q_segment_ids, kv_segment_ids)
        self.spec.check(q, k, v, segment_ids=pair, sinks=sinks, layout="BNTH", dtype_name=dtype_name)
        for name, t in operands:
            if t is not None and t.dtype != OPERAND_DTYPES[name]:
                self._fail(f"{name}: found dtype {dtype_name(t)}; the operator takes {_dtype(OPERAND_DTYPES[name])}")
        self._placement("BNTH", q=q, k=k, v=v, q_segment_ids=q_segment_ids, kv_segment_ids=kv_segment_ids,
                        sinks=sinks)

    def residuals(self, out, dout, lse):
        """The backward operator's other inputs: the forward's out and lse, and dout (BNTH)."""
        i = self.i
        expected = {"out": ((i.batch, i.q_heads, i.q_len, i.head_dim_v), i.dtype, "[batch, q_heads, q_len, head_dim_v]"),
                    "dout": ((i.batch, i.q_heads, i.q_len, i.head_dim_v), i.dtype, "[batch, q_heads, q_len, head_dim_v]"),
                    "lse": ((i.batch, i.q_heads, i.q_len), torch.float32, "[batch, q_heads, q_len]")}
        self._tensors((("out", out), ("dout", dout), ("lse", lse)))
        for name, t in (("out", out), ("dout", dout), ("lse", lse)):
            shape, dtype, axes = expected[name]
            if tuple(t.shape) != shape:
                self._fail(f"{name}: found shape {_shape(t.shape)}; expected {_shape(shape)} = {axes}")
            if t.dtype != dtype:
                self._fail(f"{name}: found dtype {dtype_name(t)}; expected {_dtype(dtype)}")
        self._placement("BNTH", out=out)

    def _tensors(self, named):
        for name, t in named:
            if t is not None and not isinstance(t, torch.Tensor):
                self._fail(f"{name}: found a {type(t).__name__}; expected a torch.Tensor")

    def _placement(self, layout, **tensors):
        """Strides the launchers read (q, k, v, out) and one device for every tensor."""
        for name in ("q", "k", "v", "out"):
            t = tensors.get(name)
            if t is not None and not kernel_readable(to_bnth(t, layout)):
                self._fail(f"{name}: found strides {tuple(t.stride())} for shape {_shape(t.shape)} ({layout}); the "
                           f"kernels read head_dim contiguous (stride 1) and the batch, heads and tokens strides as "
                           f"positive multiples of {STRIDE_ELEMENTS} elements (16 bytes, for TMA): pass t.contiguous()")
        present = [(name, t) for name, t in tensors.items() if t is not None]
        devices = {t.device for _, t in present}
        if len(devices) != 1:
            self._fail("found the arguments on different devices: " +
                       ", ".join(f"{name} on {t.device}" for name, t in present))
        device = devices.pop()
        if device.type not in ("cpu", "cuda", "meta"):
            self._fail(f"found the arguments on {device}; kgen.torch runs CUDA tensors on the sm90a kernels and CPU "
                       f"tensors on the same kernels emulated (ptxemu)")
