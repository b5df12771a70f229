"""One forward or backward launch through a shim, for CUDA tensors or emulated for CPU tensors.

The launch is the same code for both; what differs is where the kernel's memory is:
- CUDA tensors: the tensors' own memory, on torch's current stream of their device; the
  launch is asynchronous, as any CUDA op in torch.
- CPU tensors: ptxemu's device memory (the CUDA runtime stand-in the emulated shim links).
  Each tensor's span (its first to its last element, strides kept, so a BTNH tensor goes to
  the kernel with its BTNH strides) is copied in, the kernel runs on the CPU, the outputs'
  spans are copied back. One emulated launch at a time per shim (a lock).
"""
import threading

import torch

from . import native

# ptxemu ends the process on a finding (a race, a hazard, an out-of-bounds access) unless told
# to turn it into a sticky launch failure, which the shim reports as an exception.
EMULATOR_ENVIRONMENT = {"KGEN_EMU_CONTINUE": "1"}


def launcher_strides(t):
    """(batch, head, row) element strides of a [batch, heads, rows, features] tensor. A size-1
    dimension's stride is never read; the launcher still checks it, so it gets the contiguous
    one."""
    strides = []
    for d in range(3):
        if t.size(d) == 1:
            contiguous = 1
            for size in t.shape[d + 1:]:
                contiguous *= size
            strides.append(contiguous)
        else:
            strides.append(t.stride(d))
    return strides


class CudaMemory:
    """CUDA tensors: launched where they are."""

    def __init__(self, device):
        self.torch_device = device
        self.device = device.index if device.index is not None else torch.cuda.current_device()
        self.stream = torch.cuda.current_stream(device).cuda_stream
        self.scratch_tensors = []

    def input(self, t):
        return t.data_ptr() if t is not None else None

    output = input

    def scratch(self, size):
        """Device memory of any content for this launch (torch's allocator orders its reuse
        after the launch on the same stream)."""
        t = torch.empty(size, dtype=torch.uint8, device=self.torch_device)
        self.scratch_tensors.append(t)
        return t.data_ptr()

    def finish(self, shim):
        pass


class EmulatedMemory:
    """CPU tensors: mirrored in ptxemu's device memory for one launch."""

    device = 0
    stream = None

    def __init__(self, shim):
        self.shim = shim
        self.allocations = []
        self.outputs = []

    @staticmethod
    def _span_bytes(t):
        elements = 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
        return elements * t.element_size()

    def _mirror(self, t):
        size = self._span_bytes(t)
        return self.scratch(size), size

    def input(self, t):
        if t is None:
            return None
        address, size = self._mirror(t)
        self.shim.copy_to_device(address, t.data_ptr(), size)
        return address

    def output(self, t):
        address, size = self._mirror(t)
        self.outputs.append((t, address, size))
        return address

    def scratch(self, size):
        address = self.shim.alloc(size)
        self.allocations.append(address)
        return address

    def finish(self, shim):
        shim.synchronize()
        for t, address, size in self.outputs:
            shim.copy_to_host(t.data_ptr(), address, size)

    def free(self):
        for address in self.allocations:
            self.shim.free(address)


def _tensor(memory, t, output=False):
    return native.tensor(memory.output(t) if output else memory.input(t), launcher_strides(t))


class Launcher:
    """Launches one kernel folder's shim for tensors on `kind` ("cuda" or "emulated")."""

    def __init__(self, shim, kind):
        self.shim = shim
        self.kind = kind
        self.lock = threading.Lock()

    def _run(self, device, body):
        if self.kind == "cuda":
            with torch.cuda.device(device):
                body(CudaMemory(device))
            return
        with self.lock:
            memory = EmulatedMemory(self.shim)
            try:
                body(memory)
            finally:
                memory.free()

    def forward(self, q, k, v, out, lse, q_segment_ids, kv_segment_ids, sinks):
        """Writes out (and lse) from q, k, v: [batch, heads, tokens, features] views."""

        def body(memory):
            workspace_bytes = self.shim.forward_workspace_bytes
            args = [_tensor(memory, q), _tensor(memory, k), _tensor(memory, v), _tensor(memory, out, output=True),
                    memory.output(lse) if lse is not None else None,
                    memory.input(q_segment_ids), memory.input(kv_segment_ids), memory.input(sinks),
                    memory.scratch(workspace_bytes) if workspace_bytes else None]
            self.shim.forward(*args, memory.device, memory.stream)
            memory.finish(self.shim)

        self._run(q.device, body)

    def backward(self, q, k, v, out, dout, lse, dq, dk, dv, q_segment_ids, kv_segment_ids, sinks, dsinks):
        """Writes dq, dk, dv (and dsinks) from the forward's inputs and outputs and dout."""

        def body(memory):
            workspace_address = memory.scratch(self.shim.workspace_bytes)
            args = [_tensor(memory, q), _tensor(memory, k), _tensor(memory, v), _tensor(memory, out),
                    _tensor(memory, dout), memory.input(lse), _tensor(memory, dq, output=True),
                    _tensor(memory, dk, output=True), _tensor(memory, dv, output=True), workspace_address,
                    memory.input(q_segment_ids), memory.input(kv_segment_ids), memory.input(sinks),
                    memory.output(dsinks) if dsinks is not None else None]
            self.shim.backward(*args, memory.device, memory.stream)
            memory.finish(self.shim)

        self._run(q.device, body)
