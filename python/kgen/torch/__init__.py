"""kgen's sm90a attention kernels as PyTorch operators, with gradients (docs/front-doors.md).

    import kgen.torch
    attention = kgen.torch.load("generated/splash")
    out = attention(q, k, v)                      # q, k, v: [batch, heads, tokens, head_dim]
    out.float().square().sum().backward()         # q.grad, k.grad, v.grad from the backward kernel

CUDA tensors run the generated sm90a kernels (an H100/H200), built with nvcc. CPU tensors run
the same kernels on ptxemu, kgen's CUDA emulator, built with nvcc-emu: slow (about 20 million
thread instructions a second) but the kernels' own PTX, so tests need no GPU. Builds happen
on first use and are cached by content in ~/.cache/kgen/torch.
"""
import threading

from kgen.errors import ArgumentError, GeneratedFolderError

from . import checks, interface as interfaces, ops
from .build import BuildError
from .native import KernelError
from .toolchain import ToolchainError

__all__ = ["load", "Attention", "ArgumentError", "BuildError", "GeneratedFolderError", "KernelError", "ToolchainError"]

_loaded = {}
_loaded_lock = threading.Lock()


class Attention:
    """The attention of one kernel folder: `attention(q, k, v, ...)`; see __call__."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.interface = kernel.interface
        self.forward_op = kernel.forward_op  # torch.ops.kgen.<name>_forward
        self.backward_op = kernel.backward_op  # torch.ops.kgen.<name>_backward, or None

    def __call__(self, q, k, v, *, segment_ids=None, sinks=None, return_lse=False, layout="BNTH"):
        """out, or (out, lse) with return_lse.

        q [batch, q_heads, q_len, head_dim], k and v [batch, kv_heads, kv_len, head_dim(_v)] in
        the spec's dtype, in `layout` "BNTH" (as above) or "BTNH" (tokens before heads); both go
        to the kernel without a copy. out has v's head dim, in the same layout; lse is float32
        [batch, q_heads, q_len] for BNTH, [batch, q_len, q_heads] for BTNH (natural log, -inf on
        a row with nothing to attend). segment_ids: (q_segment_ids [batch, q_len], kv_segment_ids
        [batch, kv_len]), or one tensor for both when q_len == kv_len, integers (passed as int32),
        when the spec has them; sinks: [q_heads] (passed as float32) when it has them (it gets a
        gradient). The scale, softcap and mask are the spec's. Gradients flow to q, k,
        v and sinks through out; lse has requires_grad False (the generated backward takes the
        gradient of out only).
        """
        i = self.interface
        checker = self._kernel.checker
        q_segment_ids, kv_segment_ids, sinks = checker.call(q, k, v, segment_ids, sinks, layout)
        if return_lse and not i.lse:
            raise checker.spec.error(f"return_lse: found True, but {i.spec} writes no lse: add "
                                     f"\"outputs\": {{\"lse\": true}} and regenerate: {i.regenerate}")
        result = self.forward_op(checks.to_bnth(q, layout), checks.to_bnth(k, layout), checks.to_bnth(v, layout),
                                 q_segment_ids, kv_segment_ids, sinks)
        out, lse = result if i.lse else (result, None)
        out = checks.to_bnth(out, layout)
        if not return_lse:
            return out
        return out, (lse if layout == "BNTH" else lse.transpose(1, 2))

    def build(self, device_type):
        """Builds (or finds in the cache) the library for "cuda" or "cpu" tensors now rather than
        at the first call; returns its path."""
        kind = {"cuda": "cuda", "cpu": "emulated"}[device_type]
        return self._kernel.launcher(kind).shim.path

    def __repr__(self):
        i = self.interface
        return (f"<kgen.torch attention {i.name} from {i.folder}: {i.dtype}, q [{i.batch}, {i.q_heads}, {i.q_len}, "
                f"{i.head_dim}], kv [{i.batch}, {i.kv_heads}, {i.kv_len}, {i.head_dim_v}]"
                f"{', backward' if i.backward else ''}>")


def load(folder):
    """The attention of the sm90a kernels `make gen` wrote into `folder` (e.g.
    "generated/splash"), registered as torch.ops.kgen.<name>_forward and _backward. Loading a
    folder again returns the same object; another folder of the same kernel name is an error
    (torch.library names are per process)."""
    interface = interfaces.read_interface(folder)
    with _loaded_lock:
        known = _loaded.get(interface.name)
        if known is not None:
            if known.interface != interface:
                raise GeneratedFolderError(f"kgen.torch: a kernel named {interface.name} is already loaded, from "
                                        f"{known.interface.folder}; {interface.folder} cannot be loaded beside it")
            return known
        attention = Attention(ops.Kernel(interface))
        _loaded[interface.name] = attention
        return attention
