"""Where the compilers and headers that build a shim are.

Each can be named by an environment variable; otherwise it is looked for where kgen's own
build puts it, in the repository that holds this package (python/kgen/torch/ -> ../../..):

| what | variable | default |
|---|---|---|
| nvcc 13 (CUDA tensors; also what nvcc-emu runs) | KGEN_NVCC | nvcc on PATH, /usr/local/cuda/bin/nvcc |
| nvcc-emu, ptxemu's drop-in nvcc (CPU tensors) | KGEN_NVCC_EMU | <repo>/build/verify/cuda/emu/nvcc-emu (`make build`) |
| CUTLASS/CuTe headers | KGEN_CUTLASS_INCLUDE | the nvidia-cutlass package's cutlass_library/source/include |
| kgen's runtime headers | KGEN_RUNTIME_INCLUDE | <repo>/runtime |
"""
import dataclasses
import glob
import importlib.util
import os
import re
import shutil
import subprocess

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class ToolchainError(RuntimeError):
    """A compiler or header folder the build needs is missing."""


@dataclasses.dataclass(frozen=True)
class Toolchain:
    compiler: str  # nvcc or nvcc-emu
    nvcc: str  # the nvcc behind it
    cutlass_include: str
    runtime_include: str
    emulated: bool

    def versions(self):
        """nvcc's `--version` text and CUTLASS's version.h, which the cache key holds."""
        nvcc = subprocess.run([self.nvcc, "--version"], capture_output=True, text=True).stdout
        with open(os.path.join(self.cutlass_include, "cutlass", "version.h"), encoding="utf-8") as f:
            cutlass = ".".join(re.findall(r"#define CUTLASS_(?:MAJOR|MINOR|PATCH) (\d+)", f.read()))
        return nvcc, cutlass

    def emulator_libraries(self):
        """The ptxemu libraries nvcc-emu links into the shim (the cache key holds their bytes):
        KGEN_EMU_LIB_DIR's folders, or those CMake baked into the nvcc-emu it wrote."""
        if not self.emulated:
            return []
        folders = os.environ.get("KGEN_EMU_LIB_DIR")
        if not folders:
            with open(self.compiler, encoding="utf-8") as f:
                m = re.search(r'^baked_lib_dirs="([^"@]*)"', f.read(), re.MULTILINE)
            folders = m.group(1) if m else ""
        return sorted(path for folder in folders.split(":") if folder
                      for path in glob.glob(os.path.join(folder, "libkgen_emu_*.a")))

    def environment(self):
        """The environment the compiler runs in: nvcc-emu runs KGEN_EMU_NVCC."""
        env = dict(os.environ)
        if self.emulated:
            env["KGEN_EMU_NVCC"] = self.nvcc
        return env


def _nvcc():
    for candidate in (os.environ.get("KGEN_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ToolchainError("no nvcc: kgen.torch builds its kernels with nvcc 13 (CUDA 13); put it on PATH "
                         "or set KGEN_NVCC")


def _cutlass_include():
    if os.environ.get("KGEN_CUTLASS_INCLUDE"):
        return os.environ["KGEN_CUTLASS_INCLUDE"]
    spec = importlib.util.find_spec("cutlass_library")
    candidates = [os.path.join(os.path.dirname(spec.origin), "source", "include")] if spec and spec.origin else []
    candidates += glob.glob(os.path.join(REPOSITORY, ".venv", "lib", "python3*", "site-packages",
                                         "cutlass_library", "source", "include"))
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, "cutlass", "version.h")):
            return candidate
    raise ToolchainError("no CUTLASS headers: install nvidia-cutlass==4.2.0.0 (deps/requirements-torch.txt) or "
                         "set KGEN_CUTLASS_INCLUDE to its cutlass_library/source/include")


def _runtime_include():
    folder = os.environ.get("KGEN_RUNTIME_INCLUDE", os.path.join(REPOSITORY, "runtime"))
    if not os.path.isdir(os.path.join(folder, "sm90a")):
        raise ToolchainError(f"no kgen runtime headers at {folder}: set KGEN_RUNTIME_INCLUDE to the "
                             "repository's runtime/ folder")
    return folder


def _nvcc_emu():
    candidate = os.environ.get("KGEN_NVCC_EMU", os.path.join(REPOSITORY, "build", "verify", "cuda", "emu", "nvcc-emu"))
    if not os.access(candidate, os.X_OK):
        raise ToolchainError(f"no nvcc-emu at {candidate}: CPU tensors run the kernels on ptxemu, kgen's CUDA "
                             "emulator, which `make build` builds; or set KGEN_NVCC_EMU")
    return candidate


def toolchain(emulated):
    """The tools for CUDA tensors (emulated=False) or CPU tensors on ptxemu (emulated=True)."""
    nvcc = _nvcc()
    return Toolchain(compiler=_nvcc_emu() if emulated else nvcc, nvcc=nvcc, cutlass_include=_cutlass_include(),
                     runtime_include=_runtime_include(), emulated=emulated)
