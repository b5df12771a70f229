#!/usr/bin/env python3
"""A planted numeric bug in an sm90a kernel must fail on ptxemu (docs/verification.md, "CUDA
kernels on the CPU emulator: planted numeric bugs").

  run_planted.py --harness EXE --spec SPEC.json --kernel KERNEL.cu --out DIR
                 --nvcc NVCC --cutlass-include DIR --runtime-include DIR
                 --header RUNTIME_RELATIVE_PATH --edit SED_EXPRESSION [--edit ...]
                 --expect QUANTITY [--expect ...]

1. The harness (sm90a_emu_run_<name> or sm90a_emu_backward_run_<name>, the GPU harness on
   ptxemu) runs the unplanted kernel, which must pass; its PTX modules are dumped
   (KGEN_EMU_DUMP_PTX).
2. The runtime header is copied to DIR/runtime/<path> and each sed expression applied to the
   copy; each must change it.
3. KERNEL.cu (the generated kernel file whose module is under test) is compiled to PTX by nvcc
   with compile_check.py's flags and -I DIR/runtime ahead of the real runtime.
4. The same harness runs again with that PTX in place of the kernel's module (KGEN_EMU_PTX).
   The test passes only when the harness reports numbers outside the tolerance for every
   QUANTITY (forward: out, lse; backward: dq, dk, dv, dsinks). A failure of any other kind
   (an emulator finding, a crash, a refused launch) is not what a numeric bug must cause.

Exit status: 0 the planted bug fails numerically, as it must; 1 it does not; 2 the test could
not be set up (the edit matches nothing, the unplanted kernel fails, nvcc fails...).
"""

import argparse
import math
import os
import re
import shutil
import subprocess
import sys

SETUP_ERROR = 2
# nvcc names an anonymous namespace _GLOBAL__N__<hash of the source file's absolute path>_...:
# the harness's object can come from compile_check.py's content-keyed cache, compiled from
# another build folder, so its kernels may carry another hash than this compile of the same file.
ANONYMOUS_NAMESPACE = re.compile(r"_GLOBAL__N__[0-9a-f]{8}_")
ENTRY = re.compile(r"^\s*\.(?:visible\s+)?entry\s+([A-Za-z0-9_$]+)", re.MULTILINE)
# The forward harness: "worst out error 1.25 (tolerance 0.02), worst lse error 142 (tolerance 0.001)".
FORWARD_ERRORS = re.compile(r"worst (out|lse) error (\S+) \(tolerance (\S+)\)")
# The backward harness: "  dq: relative error 0.00552 (tolerance 0.03)".
BACKWARD_ERRORS = re.compile(r"^\s+(dq|dk|dv|dsinks): relative error (\S+) \(tolerance (\S+)\)", re.MULTILINE)


def setup_error(message):
    print(f"ERROR: {message}")
    sys.exit(SETUP_ERROR)


def run_harness(args, environment_extra):
    environment = dict(os.environ, **environment_extra)
    run = subprocess.run([args.harness, args.spec], capture_output=True, text=True, env=environment,
                         timeout=args.timeout)
    return run.returncode, run.stdout + run.stderr


def plant(args):
    """The runtime header copied under DIR/runtime with every edit applied: that folder."""
    planted_runtime = os.path.join(args.out, "runtime")
    shutil.rmtree(planted_runtime, ignore_errors=True)
    source = os.path.join(args.runtime_include, args.header)
    copy = os.path.join(planted_runtime, args.header)
    os.makedirs(os.path.dirname(copy))
    shutil.copyfile(source, copy)
    for expression in args.edit:
        with open(copy, "rb") as f:
            before = f.read()
        subprocess.run(["sed", "-i", "-e", expression, copy], check=True)
        with open(copy, "rb") as f:
            if f.read() == before:
                setup_error(f"the edit '{expression}' matches nothing in {source}")
    diff = subprocess.run(["diff", source, copy], capture_output=True, text=True).stdout
    print(f"planted in {args.header}:\n{diff}")
    return planted_runtime


def compile_ptx(args, planted_runtime):
    """The kernel's PTX with the planted header; compile_check.py's flags, PTX only."""
    ptx = os.path.join(args.out, "planted.ptx")
    command = [args.nvcc, "-ptx", "-arch=compute_90a", "-O3", "-DNDEBUG", "-std=c++17",
               "--expt-relaxed-constexpr", "-I", planted_runtime, "-I", args.cutlass_include,
               "-I", args.runtime_include, os.path.abspath(args.kernel), "-o", ptx]
    build = subprocess.run(command, capture_output=True, text=True,
                           cwd=os.path.dirname(os.path.abspath(args.kernel)))
    if build.returncode != 0:
        print(build.stdout + build.stderr)
        setup_error("nvcc failed on the planted kernel: " + " ".join(command))
    return ptx


def match_module_names(ptx, dumped_folder):
    """Gives the planted PTX the anonymous-namespace hash of the harness's own module of the
    same kernels, so that KGEN_EMU_PTX finds the module it replaces."""
    with open(ptx, encoding="utf-8") as f:
        text = f.read()
    planted_entries = set(ENTRY.findall(text))
    if not planted_entries:
        setup_error(f"no kernel entry in {ptx}")
    normalized = {ANONYMOUS_NAMESPACE.sub("_GLOBAL__N__*_", name) for name in planted_entries}
    for file in sorted(os.listdir(dumped_folder)):
        with open(os.path.join(dumped_folder, file), encoding="utf-8") as f:
            module = f.read()
        entries = set(ENTRY.findall(module))
        if {ANONYMOUS_NAMESPACE.sub("_GLOBAL__N__*_", name) for name in entries} != normalized:
            continue
        if entries == planted_entries:
            return
        harness_hashes = set(ANONYMOUS_NAMESPACE.findall(module))
        planted_hashes = set(ANONYMOUS_NAMESPACE.findall(text))
        if len(harness_hashes) != 1 or len(planted_hashes) != 1:
            setup_error("the planted kernel's names differ from the harness's in more than one hash")
        print(f"(the harness's object was compiled from another folder: renaming "
              f"{planted_hashes.pop()} to {next(iter(harness_hashes))})")
        text = ANONYMOUS_NAMESPACE.sub(harness_hashes.pop(), text)
        with open(ptx, "w", encoding="utf-8") as f:
            f.write(text)
        return
    setup_error(f"the harness holds no module with the kernels of {os.path.basename(ptx)}: "
                "is --kernel the file this harness was built from?")


def outside(error, tolerance):
    value = float(error)
    return math.isnan(value) or value > float(tolerance)


def verdict(args, status, output):
    errors = {name: (error, tolerance) for name, error, tolerance in FORWARD_ERRORS.findall(output)}
    errors.update({name: (error, tolerance) for name, error, tolerance in BACKWARD_ERRORS.findall(output)})
    missing = [name for name in args.expect if name not in errors]
    if missing:
        print(f"expected the harness to report {', '.join(missing)} against the tolerance; it did not "
              f"(exit status {status}): a failure other than the numerics")
        return 1
    within = [name for name in args.expect if not outside(*errors[name])]
    if status != 1 or within:
        print(f"expected {', '.join(args.expect)} outside the tolerance and exit status 1; got exit "
              f"status {status}, within the tolerance: {', '.join(within) or 'none'}")
        return 1
    described = ", ".join(f"{name} error {errors[name][0]} (tolerance {errors[name][1]})" for name in args.expect)
    print(f"the kernel without the feature fails on the numerics, as it must: {described}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--kernel", required=True, help="the generated .cu file whose module is replaced")
    parser.add_argument("--out", required=True)
    parser.add_argument("--nvcc", required=True)
    parser.add_argument("--cutlass-include", required=True)
    parser.add_argument("--runtime-include", required=True)
    parser.add_argument("--header", required=True, help="the runtime header to plant, relative to the runtime")
    parser.add_argument("--edit", action="append", required=True, help="a sed expression that must change it")
    parser.add_argument("--expect", action="append", required=True,
                        choices=["out", "lse", "dq", "dk", "dv", "dsinks"])
    parser.add_argument("--timeout", type=float, default=240)
    args = parser.parse_args()

    dumped = os.path.join(args.out, "unplanted_ptx")
    shutil.rmtree(dumped, ignore_errors=True)
    os.makedirs(dumped)
    status, output = run_harness(args, {"KGEN_EMU_DUMP_PTX": dumped})
    if status != 0:
        print(output)
        setup_error("the unplanted kernel fails: nothing to learn from the planted one")
    print("unplanted: " + " | ".join(line.strip() for line in output.splitlines()[-5:]))

    planted_runtime = plant(args)
    ptx = compile_ptx(args, planted_runtime)
    match_module_names(ptx, dumped)
    status, output = run_harness(args, {"KGEN_EMU_PTX": ptx})
    print("planted:\n" + output)
    return verdict(args, status, output)


if __name__ == "__main__":
    sys.exit(main())
