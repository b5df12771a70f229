"""Builds one kernel folder's shim library (shim.cu over its generated launchers), cached.

Two builds of the same sources: `cuda` (nvcc, SASS for sm_90a, CUDA's static runtime: for
CUDA tensors on an H100/H200) and `emulated` (nvcc-emu: the kernels' PTX and ptxemu's CUDA
runtime stand-in: for CPU tensors). Each library exports only the shim's `kgen_*` functions
(a version script), so its CUDA runtime, real or stand-in, never meets the one torch loads.

The cache is $KGEN_CACHE_DIR/torch (default ~/.cache/kgen/torch), one folder per build, named
after the sha256 of everything the build reads that can change: the build kind and flags,
nvcc's version, CUTLASS's version, the generated .cu and .h files, every runtime header, the
shim, and for `emulated` nvcc-emu and ptxemu's libraries. A build holds a file lock, so
processes that load the same kernel at once build it once; it is written under a temporary
name and renamed, so a reader sees all of it or nothing.
"""
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import time

from . import toolchain as toolchains

log = logging.getLogger("kgen.torch")

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim.cu")
# Hopper with its "a" features (wgmma, setmaxnreg): nvcc-emu turns this into PTX for ptxemu.
ARCH = ["-gencode", "arch=compute_90a,code=sm_90a"]
# As verify/cuda/compile_check.py compiles the kernels that make test checks.
KERNEL_FLAGS = ARCH + ["-O3", "-DNDEBUG", "-std=c++17", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC"]
SHIM_FLAGS = ARCH + ["-O2", "-std=c++20", "-Xcompiler", "-fPIC"]
EXPORTS = "{ global: kgen_*; local: *; };\n"
KINDS = ("cuda", "emulated")


class BuildError(RuntimeError):
    """nvcc failed; the message holds its command and output."""


def cache_folder():
    root = os.environ.get("KGEN_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "kgen"))
    return os.path.join(root, "torch")


def _files_under(folder):
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            yield os.path.join(root, name)


def cache_key(interface, kind, tools):
    digest = hashlib.sha256()

    def add(label, data):
        data = data if isinstance(data, bytes) else data.encode()
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    def add_file(label, path):
        with open(path, "rb") as f:
            add(label, f.read())

    add("kind", kind)
    add("kernel flags", "\0".join(KERNEL_FLAGS))
    add("shim flags", "\0".join(SHIM_FLAGS))
    add("exports", EXPORTS)
    nvcc_version, cutlass_version = tools.versions()
    add("nvcc", nvcc_version)
    add("cutlass", cutlass_version)
    for path in interface.sources:
        add_file("generated " + os.path.basename(path), path)
    for path in _files_under(tools.runtime_include):
        add_file("runtime " + os.path.relpath(path, tools.runtime_include), path)
    add_file("shim", SHIM)
    if tools.emulated:
        add_file("nvcc-emu", tools.compiler)
        for path in tools.emulator_libraries():
            add_file("emulator " + os.path.basename(path), path)
    return digest.hexdigest()


def _compile_commands(interface, tools, folder):
    includes = ["-I", tools.cutlass_include, "-I", tools.runtime_include, "-I", interface.folder]
    commands, objects = [], []
    for source in (s for s in interface.sources if s.endswith(".cu")):
        obj = os.path.join(folder, os.path.basename(source) + ".o")
        commands.append([tools.compiler] + KERNEL_FLAGS + includes + ["-c", source, "-o", obj])
        objects.append(obj)
    shim = [tools.compiler] + SHIM_FLAGS + ["-I", interface.folder,
                                            "-include", interface.file("sm90a.h"),
                                            f"-DKGEN_FORWARD={interface.forward_namespace}"]
    if interface.backward:
        shim += ["-include", interface.file("sm90a.backward.h"), f"-DKGEN_BACKWARD={interface.backward_namespace}"]
    obj = os.path.join(folder, "shim.o")
    commands.append(shim + ["-c", SHIM, "-o", obj])
    objects.append(obj)
    return commands, objects


def _run_all(commands, env, jobs):
    """Runs the compiles, `jobs` at a time; raises BuildError on the first failure."""
    pending, running = list(commands), []
    while pending or running:
        while pending and len(running) < jobs:
            command = pending.pop(0)
            running.append((command, subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                                      stderr=subprocess.STDOUT, text=True)))
        command, process = running.pop(0)
        output = process.communicate()[0]
        if process.returncode != 0:
            for _, other in running:
                other.kill()
                other.wait()
            raise BuildError(f"kgen.torch: {' '.join(command)}\nfailed with status {process.returncode}:\n{output}")


def _build(interface, tools, folder):
    commands, objects = _compile_commands(interface, tools, folder)
    _run_all(commands, tools.environment(), max(1, int(os.environ.get("KGEN_BUILD_JOBS", "2"))))
    exports = os.path.join(folder, "exports.map")
    with open(exports, "w", encoding="utf-8") as f:
        f.write(EXPORTS)
    library = os.path.join(folder, f"lib{interface.name}.so")
    _run_all([[tools.compiler] + ARCH + ["-shared", "-o", library] + objects + ["-Xlinker", f"--version-script={exports}"]],
             tools.environment(), 1)
    for obj in objects:
        os.remove(obj)
    return library


def build(interface, kind):
    """The path of the shim library of `interface` for `kind` ("cuda" or "emulated"), built
    unless the cache holds it."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: expected one of {KINDS}")
    tools = toolchains.toolchain(emulated=kind == "emulated")
    cache = cache_folder()
    os.makedirs(cache, exist_ok=True)
    entry = os.path.join(cache, f"{interface.name}.{kind}.{cache_key(interface, kind, tools)[:24]}")
    library = os.path.join(entry, f"lib{interface.name}.so")
    if os.path.isfile(library):
        return library
    with open(entry + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(library):  # another process built it while this one waited
            return library
        log.info("building %s for %s into %s", interface.name, kind, entry)
        started = time.monotonic()
        folder = tempfile.mkdtemp(prefix=os.path.basename(entry) + ".", dir=cache)
        try:
            _build(interface, tools, folder)
            os.rename(folder, entry)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        log.info("built %s for %s in %.1f s", interface.name, kind, time.monotonic() - started)
    return library
