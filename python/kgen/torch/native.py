"""The shim library through ctypes: launches, and (on ptxemu) device memory.

A Shim wraps one built library (build.py). It checks at load that the library was compiled
from headers saying what MANIFEST.json's signature says (interface.py), and turns a failed status into an
exception carrying the launcher's message and the CUDA error.
"""
import ctypes

from . import interface as interfaces

STATUS = {1: "invalid argument", 2: "unsupported device", 3: "CUDA error"}


class KernelError(RuntimeError):
    """A launcher or CUDA call failed."""


class Tensor(ctypes.Structure):
    """kgen_tensor of shim.cu: data and (batch, head, row) strides in elements."""
    _fields_ = [("data", ctypes.c_void_p), ("batch", ctypes.c_int64), ("head", ctypes.c_int64),
                ("row", ctypes.c_int64)]


P = ctypes.c_void_p
TENSOR = ctypes.POINTER(Tensor)
STATUS_OUT = [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int)]


class Shim:
    def __init__(self, path, interface):
        self.path = path
        self.interface = interface
        lib = ctypes.CDLL(path)
        lib.kgen_shape.argtypes = [ctypes.POINTER(ctypes.c_int64)]
        lib.kgen_shape.restype = None
        lib.kgen_dtype.restype = ctypes.c_char_p
        lib.kgen_operands.restype = ctypes.c_int
        lib.kgen_workspace_bytes.restype = ctypes.c_uint64
        lib.kgen_forward_workspace_bytes.restype = ctypes.c_uint64
        lib.kgen_forward.argtypes = [TENSOR] * 4 + [P] * 5 + [ctypes.c_int, P] + STATUS_OUT
        lib.kgen_forward.restype = ctypes.c_int
        lib.kgen_backward.argtypes = [TENSOR] * 5 + [P] + [TENSOR] * 3 + [P] * 5 + [ctypes.c_int, P] + STATUS_OUT
        lib.kgen_backward.restype = ctypes.c_int
        lib.kgen_device_alloc.argtypes = [ctypes.c_uint64]
        lib.kgen_device_alloc.restype = P
        lib.kgen_device_free.argtypes = [P]
        lib.kgen_copy_to_device.argtypes = [P, P, ctypes.c_uint64]
        lib.kgen_copy_to_host.argtypes = [P, P, ctypes.c_uint64]
        lib.kgen_error_string.argtypes = [ctypes.c_int]
        lib.kgen_error_string.restype = ctypes.c_char_p
        self.lib = lib
        self._check_interface()
        self.workspace_bytes = lib.kgen_workspace_bytes()  # the backward's kWorkspaceBytes, 0 without one
        # The forward's document pre-pass lists (kDocumentTilesInts), 0 without segment ids.
        self.forward_workspace_bytes = lib.kgen_forward_workspace_bytes()

    def _check_interface(self):
        shape = (ctypes.c_int64 * 7)()
        self.lib.kgen_shape(shape)
        i = self.interface
        bits = self.lib.kgen_operands()
        compiled = (tuple(shape), self.lib.kgen_dtype().decode(), bool(bits & 1), bool(bits & 2), bool(bits & 4),
                    bool(bits & 8))
        read = ((i.batch, i.q_heads, i.kv_heads, i.q_len, i.kv_len, i.head_dim, i.head_dim_v),
                next(k for k, v in interfaces.DTYPES.items() if v == i.dtype), i.lse, i.segment_ids, i.sinks,
                i.backward)
        if compiled != read:
            raise KernelError(f"{self.path}: compiled from headers that say {compiled}, but {i.folder} says {read}")

    def _raise_on_failure(self, what, status, message, cuda_error):
        if status == 0:
            return
        text = f"kgen.torch {self.interface.name}: the {what} launcher failed ({STATUS.get(status, status)}): " \
               f"{message.value.decode()}"
        if cuda_error.value:
            text += f" (CUDA error {cuda_error.value}: {self.error_string(cuda_error.value)})"
        raise KernelError(text)

    def error_string(self, error):
        return self.lib.kgen_error_string(error).decode()

    def forward(self, q, k, v, out, lse, q_segment_ids, kv_segment_ids, sinks, workspace, device, stream):
        """Launches the forward; tensors are Tensor structures, the rest device addresses or None
        (workspace: forward_workspace_bytes of scratch, None when that is 0); device is the CUDA
        device index (-1: the current one), stream a cudaStream_t or None."""
        message, cuda_error = ctypes.c_char_p(), ctypes.c_int()
        status = self.lib.kgen_forward(q, k, v, out, lse, q_segment_ids, kv_segment_ids, sinks, workspace, device,
                                       stream, ctypes.byref(message), ctypes.byref(cuda_error))
        self._raise_on_failure("forward", status, message, cuda_error)

    def backward(self, q, k, v, out, dout, lse, dq, dk, dv, workspace, q_segment_ids, kv_segment_ids, sinks, dsinks,
                 device, stream):
        message, cuda_error = ctypes.c_char_p(), ctypes.c_int()
        status = self.lib.kgen_backward(q, k, v, out, dout, lse, dq, dk, dv, workspace, q_segment_ids,
                                        kv_segment_ids, sinks, dsinks, device, stream,
                                        ctypes.byref(message), ctypes.byref(cuda_error))
        self._raise_on_failure("backward", status, message, cuda_error)

    def check(self, what, error):
        if error:
            raise KernelError(f"kgen.torch {self.interface.name}: {what} failed: CUDA error {error}: "
                              f"{self.error_string(error)}")

    def alloc(self, size):
        address = self.lib.kgen_device_alloc(max(size, 1))
        if not address:
            raise KernelError(f"kgen.torch {self.interface.name}: cudaMalloc of {size} bytes failed")
        return address

    def free(self, address):
        self.lib.kgen_device_free(address)

    def copy_to_device(self, device_address, host_address, size):
        self.check("cudaMemcpy to the device", self.lib.kgen_copy_to_device(device_address, host_address, size))

    def copy_to_host(self, host_address, device_address, size):
        self.check("cudaMemcpy to the host", self.lib.kgen_copy_to_host(host_address, device_address, size))

    def synchronize(self):
        self.check("the kernel", self.lib.kgen_synchronize())


def tensor(data, strides):
    """A Tensor structure: `data` an address, `strides` the (batch, head, row) element strides."""
    return Tensor(data, *strides)
