"""The torch.library operators of one kernel folder: kgen::<name>_forward and _backward.

Both are `torch.library.custom_op`s with a fake (meta) implementation, so torch.compile and
torch.export trace them without running anything; the forward has the backward as its
autograd formula (`register_autograd`). The operators work on [batch, heads, tokens,
features] tensors with any strides the checks accept; `kgen.torch.load` puts the layouts
and argument names users know around them. Their real implementation runs the generated
kernels: on CUDA tensors with the nvcc build, on CPU tensors with the nvcc-emu build on
ptxemu. Each build happens on first use and is cached (build.py).
"""
import os
import threading

import torch

from . import build, checks, launch, native

_SCHEMA_INPUTS = "Tensor q, Tensor k, Tensor v, Tensor? q_segment_ids, Tensor? kv_segment_ids, Tensor? sinks"


def _empty_like_layout(reference, features, dtype=None):
    """An uninitialized [batch, heads, tokens, features] tensor laid out as `reference` is
    (BTNH memory when its tokens stride is below its heads stride), so the output of a BTNH
    call is BTNH too. The real and the fake implementation both allocate with this."""
    b, h, t, _ = reference.shape
    dtype = dtype or reference.dtype
    if h > 1 and t > 1 and reference.stride(2) > reference.stride(1):
        return reference.new_empty((b, t, h, features), dtype=dtype).transpose(1, 2)
    return reference.new_empty((b, h, t, features), dtype=dtype)


class Kernel:
    """A kernel folder's operators and its launchers, built on first use per device type."""

    def __init__(self, interface):
        self.interface = interface
        self.checker = checks.Checker(interface)
        self._launchers = {}
        self._launchers_lock = threading.Lock()
        self.forward_op = self._define_forward()
        self.backward_op = self._define_backward() if interface.backward else None
        self._register_autograd()

    def launcher(self, kind):
        """The Launcher of the shim built for `kind` ("cuda" or "emulated")."""
        with self._launchers_lock:
            if kind not in self._launchers:
                if kind == "emulated":
                    for name, value in launch.EMULATOR_ENVIRONMENT.items():
                        os.environ.setdefault(name, value)
                shim = native.Shim(build.build(self.interface, kind), self.interface)
                self._launchers[kind] = launch.Launcher(shim, kind)
            return self._launchers[kind]

    def _launcher_for(self, t):
        return self.launcher("cuda" if t.device.type == "cuda" else "emulated")

    # The forward: (out, lse), or out alone when the spec writes no lse.

    def _forward_outputs(self, q):
        i = self.interface
        out = _empty_like_layout(q, i.head_dim_v)
        lse = q.new_empty((i.batch, i.q_heads, i.q_len), dtype=torch.float32) if i.lse else None
        return out, lse

    def _define_forward(self):
        i = self.interface
        returns = "(Tensor, Tensor)" if i.lse else "Tensor"

        def forward(q, k, v, q_segment_ids, kv_segment_ids, sinks):
            self.checker.operands(q, k, v, q_segment_ids, kv_segment_ids, sinks)
            out, lse = self._forward_outputs(q)
            optional = [None if t is None else t.contiguous() for t in (q_segment_ids, kv_segment_ids, sinks)]
            self._launcher_for(q).forward(q, k, v, out, lse, *optional)
            return (out, lse) if i.lse else out

        op = torch.library.custom_op(f"kgen::{i.name}_forward", forward, mutates_args=(),
                                     schema=f"({_SCHEMA_INPUTS}) -> {returns}")

        @op.register_fake
        def _(q, k, v, q_segment_ids, kv_segment_ids, sinks):
            self.checker.operands(q, k, v, q_segment_ids, kv_segment_ids, sinks)
            out, lse = self._forward_outputs(q)
            return (out, lse) if i.lse else out

        return op

    # The backward: (dq, dk, dv, dsinks), without dsinks when the spec has no sinks.

    def _backward_outputs(self, q, k, v):
        i = self.interface
        dsinks = q.new_empty((i.q_heads,), dtype=torch.float32) if i.sinks else None
        return (_empty_like_layout(q, i.head_dim), _empty_like_layout(k, i.head_dim),
                _empty_like_layout(v, i.head_dim_v), dsinks)

    def _define_backward(self):
        i = self.interface
        returns = "(Tensor, Tensor, Tensor, Tensor)" if i.sinks else "(Tensor, Tensor, Tensor)"

        def backward(q, k, v, out, dout, lse, q_segment_ids, kv_segment_ids, sinks):
            self.checker.operands(q, k, v, q_segment_ids, kv_segment_ids, sinks)
            self.checker.residuals(out, dout, lse)
            dq, dk, dv, dsinks = self._backward_outputs(q, k, v)
            # dout comes from autograd with any strides (a sum's gradient is an expanded
            # scalar: every stride 0): copied when the kernel cannot read it as it is.
            if not checks.kernel_readable(dout):
                dout = _empty_like_layout(out, i.head_dim_v).copy_(dout)
            optional = [None if t is None else t.contiguous() for t in (q_segment_ids, kv_segment_ids, sinks)]
            self._launcher_for(q).backward(q, k, v, out, dout, lse.contiguous(), dq, dk, dv, *optional, dsinks)
            return (dq, dk, dv, dsinks) if i.sinks else (dq, dk, dv)

        op = torch.library.custom_op(
            f"kgen::{i.name}_backward", backward, mutates_args=(),
            schema=f"(Tensor q, Tensor k, Tensor v, Tensor out, Tensor dout, Tensor lse, Tensor? q_segment_ids, "
                   f"Tensor? kv_segment_ids, Tensor? sinks) -> {returns}")

        @op.register_fake
        def _(q, k, v, out, dout, lse, q_segment_ids, kv_segment_ids, sinks):
            self.checker.operands(q, k, v, q_segment_ids, kv_segment_ids, sinks)
            self.checker.residuals(out, dout, lse)
            dq, dk, dv, dsinks = self._backward_outputs(q, k, v)
            return (dq, dk, dv, dsinks) if i.sinks else (dq, dk, dv)

        return op

    def _register_autograd(self):
        i = self.interface

        def setup_context(ctx, inputs, output):
            q, k, v, q_segment_ids, kv_segment_ids, sinks = inputs
            out, lse = output if i.lse else (output, None)
            ctx.save_for_backward(q, k, v, out, lse, q_segment_ids, kv_segment_ids, sinks)
            # The generated backward takes the gradient of out only (§7): lse leaves the
            # operator with requires_grad False rather than with a gradient silently dropped.
            if lse is not None:
                ctx.mark_non_differentiable(lse)
            ctx.set_materialize_grads(False)

        def backward(ctx, *grads):
            grad_out = grads[0]
            if self.backward_op is None:
                raise NotImplementedError(
                    f"kgen.torch {i.name}: {i.spec} has no backward kernel: add \"backward\": true to the spec "
                    f"and run `{i.regenerate}`")
            q, k, v, out, lse, q_segment_ids, kv_segment_ids, sinks = ctx.saved_tensors
            if grad_out is None:
                return None, None, None, None, None, None
            grads = self.backward_op(q, k, v, out, grad_out, lse, q_segment_ids, kv_segment_ids, sinks)
            dq, dk, dv = grads[:3]
            dsinks = grads[3] if i.sinks else None
            return dq, dk, dv, None, None, dsinks

        torch.library.register_autograd(self.forward_op, backward, setup_context=setup_context)
