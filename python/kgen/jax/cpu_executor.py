"""Registers kgen's CPU executor of Mosaic kernels as an XLA FFI target for the CPU.

The handler (python/native/jax_mosaic_cpu.cc, built by `make build` into
build/python/libkgen_jax_cpu.so) takes a tpu_custom_call's operands and results, and the
`.mlir` path and sha256 as attributes; it JIT-compiles each kernel once per process and runs
its whole grid (verify/mosaic/README.md)."""
from __future__ import annotations

import ctypes
import os
import pathlib
import threading

import jax

from kgen.errors import GeneratedFolderError

TARGET = "kgen_mosaic_cpu"
LIBRARY_VARIABLE = "KGEN_JAX_CPU_LIBRARY"
_lock = threading.Lock()
_library: ctypes.CDLL | None = None


def library_path() -> pathlib.Path:
  """$KGEN_JAX_CPU_LIBRARY, else the build tree of the checkout this package is in."""
  if os.environ.get(LIBRARY_VARIABLE):
    return pathlib.Path(os.environ[LIBRARY_VARIABLE])
  root = pathlib.Path(__file__).resolve().parents[3]  # python/kgen/jax/ -> the checkout
  return root / "build" / "python" / "libkgen_jax_cpu.so"


def register() -> None:
  """Loads the handler library and registers TARGET for the CPU, once per process."""
  global _library
  with _lock:
    if _library is not None:
      return
    path = library_path()
    if not path.is_file():
      raise GeneratedFolderError(
          f"{path}: kgen's CPU executor library is not built; run `make build` in kgen's "
          f"checkout, or point {LIBRARY_VARIABLE} at libkgen_jax_cpu.so")
    library = ctypes.CDLL(str(path))  # RTLD_LOCAL: its MLIR stays apart from jaxlib's
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(library.kgen_mosaic_cpu),
                                platform="cpu")
    _library = library
