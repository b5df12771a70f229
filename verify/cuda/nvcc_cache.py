"""nvcc for a kgen CUDA kernel, as a user builds it, with its output cached by content.

The compile check (compile_check.py) and the tuning measurer (tune_measure.py) take nvcc's
log and object from here. The cache key is every byte nvcc reads that can change here (the
kernel, the headers it includes from its own folder, every header of the runtime folders it
reaches, the CUTLASS version, nvcc's version and the command's flags) and this module itself,
which decides how nvcc runs. The checks that read the log and the SASS are not in the key:
a new fact or threshold in compile_check.py reads the cached object, it does not recompile
every kernel. The cache is $KGEN_COMPILE_CACHE (default ~/.cache/kgen/nvcc);
KGEN_COMPILE_CACHE=off turns it off. Failed compiles are not cached.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess


def nvcc_command(args, source, obj):
    arch = args.arch
    compute = "compute_" + arch.split("_", 1)[1]
    return [
        args.nvcc,
        # SASS for the checks below, and the PTX beside it (what -arch=sm_90a embeds too),
        # uncompressed, so that the same object runs on ptxemu (verify/cuda/emu).
        "-gencode", f"arch={compute},code=[{arch},{compute}]", "--no-compress",
        "-O3", "-DNDEBUG", "-std=c++17", "--expt-relaxed-constexpr",
        "-I", os.path.abspath(args.cutlass_include),
        "-I", os.path.abspath(args.runtime_include),
        "-Xptxas", "-v",
        "-c", source, "-o", obj,
    ]


def tool_versions(args):
    """nvcc's release (V13.0.88 -> 13.0.88) and CUTLASS's version from cutlass/version.h."""
    versions = {}
    nvcc = subprocess.run([args.nvcc, "--version"], capture_output=True, text=True)
    m = re.search(r"\bV(\d+(?:\.\d+)+)", nvcc.stdout)
    versions["nvcc"] = m.group(1) if m else "unknown"
    try:
        with open(os.path.join(args.cutlass_include, "cutlass", "version.h"), encoding="utf-8") as f:
            header = f.read()
        parts = [re.search(r"#define CUTLASS_" + p + r" (\d+)", header) for p in ("MAJOR", "MINOR", "PATCH")]
        versions["cutlass"] = ".".join(m.group(1) for m in parts) if all(parts) else "unknown"
    except OSError:
        versions["cutlass"] = "unknown"
    return versions


def cache_folder():
    folder = os.environ.get("KGEN_COMPILE_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "kgen", "nvcc"))
    return None if folder == "off" else folder


INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)


def runtime_folders(text, runtime):
    """The folders of the runtime that a kernel reaches: those its includes name ("sm100a/...",
    "cuda/..."), closed over the includes of their own files. A change to another target's
    runtime does not recompile it."""
    folders, pending = set(), [text]
    while pending:
        for path in INCLUDE.findall(pending.pop()):
            folder = path.split("/", 1)[0]
            if "/" not in path or folder in folders or not os.path.isdir(os.path.join(runtime, folder)):
                continue
            folders.add(folder)
            for root, _, files in os.walk(os.path.join(runtime, folder)):
                for file in files:
                    with open(os.path.join(root, file), encoding="utf-8", errors="replace") as f:
                        pending.append(f.read())
    return sorted(folders)


def cache_key(args, command, text):
    """sha256 over everything the compile depends on that can change between runs here."""
    digest = hashlib.sha256()

    def add(label, data):
        data = data if isinstance(data, bytes) else data.encode()
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    add("flags", "\0".join(command[1:-4]))  # without the tool, the source and the object paths
    add("nvcc", subprocess.run([args.nvcc, "--version"], capture_output=True, text=True).stdout)
    add("cutlass", json.dumps(tool_versions(args), sort_keys=True))
    add("kernel", text)
    folder = os.path.dirname(os.path.abspath(args.kernel))
    for local in sorted(set(re.findall(r'^#include "([^"]+)"', text, re.MULTILINE))):
        with open(os.path.join(folder, local), "rb") as f:
            add("local " + local, f.read())
    runtime = os.path.abspath(args.runtime_include)
    for runtime_folder in runtime_folders(text, runtime):
        for root, _, files in sorted(os.walk(os.path.join(runtime, runtime_folder))):
            for file in sorted(files):
                path = os.path.join(root, file)
                with open(path, "rb") as f:
                    add("runtime " + os.path.relpath(path, runtime), f.read())
    with open(os.path.abspath(__file__), "rb") as f:
        add("compiler module", f.read())
    return digest.hexdigest()


def compile_cached(args, command, text, obj):
    """Runs nvcc (or takes its cached result): (return code, log, cached?)."""
    folder = cache_folder()
    entry = os.path.join(folder, cache_key(args, command, text)) if folder else None
    if entry and os.path.isfile(entry + ".o") and os.path.isfile(entry + ".log"):
        shutil.copyfile(entry + ".o", obj)
        with open(entry + ".log", encoding="utf-8") as f:
            return 0, f.read(), True
    build = subprocess.run(command, cwd=os.path.dirname(os.path.abspath(args.kernel)), capture_output=True, text=True)
    log = build.stdout + build.stderr
    if entry and build.returncode == 0:
        os.makedirs(folder, exist_ok=True)
        # Written under temporary names and renamed: a concurrent reader sees all or nothing.
        for suffix, write in ((".o", lambda path: shutil.copyfile(obj, path)),
                              (".log", lambda path: open(path, "w", encoding="utf-8").write(log))):
            temporary = f"{entry}{suffix}.{os.getpid()}"
            write(temporary)
            os.replace(temporary, entry + suffix)
    return build.returncode, log, False


