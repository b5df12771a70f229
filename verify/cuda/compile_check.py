#!/usr/bin/env python3
"""Compile-only check of a generated sm90a or sm100a kernel (no GPU needed).

Compiles KERNEL.cu with nvcc for its architecture (--arch sm_90a or sm_100a) exactly as a
user would build it, then fails when

  * nvcc fails;
  * ptxas reports a stack frame, spill stores or loads, or local memory (lmem) for any function;
  * ptxas says the wgmma pipeline was lost: C7510 (wgmma serialized across a function
    boundary), C7513 (serialized because registers of an in-flight wgmma are redefined), or
    C7508 (setmaxnreg ignored);
  * nvcc or ptxas prints a warning (generated kernels compile cleanly);
  * the SASS (cuobjdump -sass) has LDL/STL (local memory) instructions;
  * sm_90a: the SASS has no HGMMA instruction (the kernel is off the wgmma path);
  * with --ptxemu-decode, the CPU emulator (verify/cuda/emu) does not implement an instruction
    of the kernel's PTX (the object carries its PTX beside the SASS);
  * sm_100a: the SASS has not exactly the UTCHMMA (tcgen05.mma) count the kernel's header
    promises ("N tcgen05.mma per tile": one issue site per instruction), or no UTCBAR
    (tcgen05.commit), LDTM/STTM (tensor-memory loads and stores) or UTMALDG (TMA loads), or
    any HGMMA/WARPGROUP instruction (Hopper's path), or more BPT.TRAP than the three
    tcgen05 guardrail stubs ptxas links (a build without the "a" features traps instead of
    computing).
  * the kernel's plan promises a schedule (the "schedule" of its MANIFEST.json entry) that
    the SASS does not show (sass_schedule.py: MUFU.EX2 between the wgmma waits, TMA boxes per
    K and V tile, products per main-loop iteration, named barriers in the main loop).
  (A block plan with no live tile computes nothing; its kernel is not required to contain
  tensor-core instructions.)

Every kernel's schedule facts (sass_schedule.py) are printed on its PASS/FAIL line and written
into the report, promised or not.

--report writes the findings as JSON: what a kernel's receipt records as its nvcc_sass check
(docs/receipts.md), with the nvcc and CUTLASS versions and no times.

nvcc runs through nvcc_cache.py, which caches its log and object by content (the kernel, its
headers, the runtime folders it reaches, the tool versions, the flags, nvcc_cache.py itself; not
this file): an unchanged kernel is not recompiled, and every check here still runs on the cached
log and object, so a new check costs a cuobjdump, not an nvcc run.

Exit status: 0 pass, 1 a check failed, 2 a usage or tool error.

  compile_check.py KERNEL.cu --nvcc NVCC --cutlass-include DIR --cuobjdump CUOBJDUMP
                   [--runtime-include DIR] [--nvdisasm DIR] [--arch sm_90a|sm_100a] [--no-expect-hgmma]
                   [--object OUT.o]
                   [--report OUT.json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvcc_cache import compile_cached, nvcc_command, tool_versions  # noqa: E402  pylint: disable=wrong-import-position
import sass_schedule  # noqa: E402  pylint: disable=wrong-import-position

PIPELINE_CODES = {
    "C7510": "wgmma serialized: the pipeline crosses a function boundary",
    "C7513": "wgmma serialized: registers of an in-flight wgmma are redefined",
    "C7508": "setmaxnreg ignored",
}
# ptxas links three tcgen05 guardrail stubs (a BPT.TRAP each) into every sm_100a kernel that
# allocates tensor memory (docs/sm100a-research.md, section 3).
GUARDRAIL_TRAPS = 3


def parse_ptxas(text):
    """Per-function resource lines of `ptxas -v`: registers, stack, spills, lmem."""
    functions = []
    current = None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = {"function": m.group(1), "stack": 0, "spill_stores": 0, "spill_loads": 0,
                       "lmem": 0, "registers": None}
            functions.append(current)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current is not None:
            current["stack"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
            lm = re.search(r"(\d+) bytes lmem", line)
            if lm:
                current["lmem"] = int(lm.group(1))
    return functions


def readable(functions):
    """The functions with demangled names: nvcc names an anonymous namespace after a hash that
    need not be the same in another checkout, and receipts must not change with it."""
    names = [fn["function"] for fn in functions]
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    except OSError:
        out = []
    if len(out) < len(names):
        out = names
    return [dict(fn, function=name) for fn, name in zip(functions, out)]


# SASS mnemonics of an sm_100a kernel: what each fact of its report counts.
SM100A_FACTS = {
    "utchmma": r"\bUTCHMMA\b",             # tcgen05.mma, kind::f16
    "utcbar": r"\bUTCBAR\b",               # tcgen05.commit to an mbarrier
    "ldtm": r"\bLDTM\b",                   # tcgen05.ld
    "sttm": r"\bSTTM\b",                   # tcgen05.st
    "utmaldg": r"\bUTMALDG\b",             # TMA load
    "warpgroup": r"\bWARPGROUP\.",          # Hopper's wgmma fences
    "traps": r"\bBPT\.TRAP\b",
    "mufu_ex2": r"\bMUFU\.EX2\b",          # exponentials on the MUFU unit (a fact, not a check)
}


def sm100a_failures(facts, expected_utchmma, hgmma):
    """What an sm_100a kernel's SASS must show (the module docstring)."""
    failures = []
    if facts["utchmma"] != expected_utchmma:
        failures.append(f"{facts['utchmma']} UTCHMMA in the SASS, expected {expected_utchmma} "
                        "(the kernel's tcgen05.mma per tile, one issue site each)")
    if expected_utchmma:
        for fact, what in (("utcbar", "UTCBAR (tcgen05.commit)"), ("ldtm", "LDTM (tensor-memory load)"),
                           ("sttm", "STTM (tensor-memory store)"), ("utmaldg", "UTMALDG (TMA load)")):
            if facts[fact] == 0:
                failures.append(f"no {what} in the SASS")
    if hgmma or facts["warpgroup"]:
        failures.append(f"{hgmma} HGMMA and {facts['warpgroup']} WARPGROUP in the SASS: Hopper's wgmma path")
    if facts["traps"] > GUARDRAIL_TRAPS:
        failures.append(f"{facts['traps']} BPT.TRAP in the SASS (the tcgen05 guardrails are {GUARDRAIL_TRAPS}): "
                        "was it built for sm_100a with its 'a' features?")
    return failures


# The Config's `static constexpr int kBlockKv = 128;`, or the launcher header's
# `inline constexpr int kBlockKv = 128;` where the Config only names it (the sm90a decode's).
CONFIG_INT = r"constexpr int {} = (\d+);"


def with_own_headers(kernel, text):
    """The kernel's text, then that of each header it includes by a quoted name from its own
    folder (its launcher header), so exponentials_per_tile reads the values the Config aliases."""
    folder = os.path.dirname(kernel)
    for header in re.findall(r'^#include "([^"/]+)"', text, re.M):
        path = os.path.join(folder, header)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                text += "\n" + f.read()
    return text


def exponentials_per_tile(text, blackwell):
    """Exponentials one softmax thread computes per tile, from the plan's Config in the kernel:
    a tile is kBlockQ x kBlockKv scores over the softmax warpgroups' 128-thread rows (sm_90a:
    kConsumers warpgroups of kBlockQ / kConsumers rows; sm_100a: one softmax warpgroup, a row
    per thread). None when the kernel names no such Config (a backward, a planted kernel).
    The kernel's own Config comes first in `text`, so its values win over a header's."""
    values = {}
    for name in ("kBlockQ", "kBlockKv", "kConsumers"):
        m = re.search(CONFIG_INT.format(name), text)
        values[name] = int(m.group(1)) if m else None
    if values["kBlockQ"] is None or values["kBlockKv"] is None:
        return None
    groups = 1 if blackwell else values["kConsumers"]
    if not groups:
        return None
    return values["kBlockQ"] * values["kBlockKv"] // (128 * groups)


def schedule_promise(kernel):
    """The schedule the kernel's plan promises: the "schedule" of its entry in the MANIFEST.json
    beside it (written by kgen gen from the plan); None when there is none."""
    manifest = os.path.join(os.path.dirname(os.path.abspath(kernel)), "MANIFEST.json")
    try:
        with open(manifest, encoding="utf-8") as f:
            entry = json.load(f).get("files", {}).get(os.path.basename(kernel), {})
    except (OSError, ValueError):
        return None
    return entry.get("schedule")


def ptxemu_failures(args, obj):
    """The object's PTX decoded by ptxemu (verify/cuda/emu) as a launch would: every instruction
    the kernel uses must be one the CPU emulator implements."""
    with tempfile.TemporaryDirectory() as folder:
        extract = subprocess.run([args.cuobjdump, "-xptx", "all", os.path.abspath(obj)], cwd=folder,
                                 capture_output=True, text=True)
        ptx = [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".ptx")]
        if extract.returncode != 0 or not ptx:
            return ["no PTX in the object for ptxemu (cuobjdump -xptx found none)"]
        decode = subprocess.run([args.ptxemu_decode] + ptx, capture_output=True, text=True)
    if decode.returncode != 0:
        return ["ptxemu cannot run the kernel: " + (decode.stderr.strip() or decode.stdout.strip())]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel")
    parser.add_argument("--nvcc", required=True)
    parser.add_argument("--cutlass-include", required=True)
    parser.add_argument("--runtime-include", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime"),
                        help="kgen's runtime headers (runtime/ of this checkout by default)")
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--nvdisasm", help="nvdisasm's folder, when it is not beside cuobjdump or on PATH")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--no-expect-hgmma", dest="expect_hgmma", action="store_false",
                        help="sm_90a: a kernel without HGMMA passes (the planted-defect tests' own kernels)")
    parser.add_argument("--object", help="keep the compiled object here")
    parser.add_argument("--report", help="write the findings as JSON here")
    parser.add_argument("--ptxemu-decode", help="also fail when ptxemu (this ptxemu-decode) lacks an instruction of the kernel")
    args = parser.parse_args()

    name = os.path.basename(args.kernel)
    notes = []
    try:
        with open(args.kernel, encoding="utf-8") as f:
            text = f.read()
        # A block plan without a live tile computes nothing: the compiler folds the
        # constant tables and drops every wgmma. The header line says so.
        live = re.search(r"\b(\d+) of (\d+) tiles live\b", text)
        no_live_tile = bool(live) and int(live.group(1)) == 0
        blackwell = args.arch == "sm_100a"
        if no_live_tile and args.expect_hgmma and not blackwell:
            args.expect_hgmma = False
            notes.append("no live tile in the block plan: HGMMA not required")
        expected_utchmma = None
        if blackwell:
            per_tile = re.search(r"\b(\d+) tcgen05\.mma per tile\b", text)
            if not per_tile:
                print(f"ERROR {name}: an sm_100a kernel names its tcgen05.mma count ('N tcgen05.mma per tile')")
                return 2
            expected_utchmma = 0 if no_live_tile else int(per_tile.group(1))
    except OSError as e:
        print(f"ERROR {name}: {e}")
        return 2
    for tool, path in (("nvcc", args.nvcc), ("cuobjdump", args.cuobjdump)):
        if not (path and os.path.isfile(path) and os.access(path, os.X_OK)):
            print(f"ERROR {name}: {tool} not found at '{path}' (the CUDA checks need nvcc 13 and "
                  "PyPI's nvidia-cuda-cuobjdump with nvidia-cuda-nvdisasm)")
            return 2
    if not os.path.isfile(os.path.join(args.cutlass_include, "cute", "tensor.hpp")):
        print(f"ERROR {name}: no CUTLASS/CuTe headers under '{args.cutlass_include}'")
        return 2

    with tempfile.TemporaryDirectory(prefix="kgen-nvcc-") as scratch:
        obj = os.path.abspath(args.object) if args.object else os.path.join(scratch, "kernel.o")
        if args.object:
            os.makedirs(os.path.dirname(os.path.abspath(obj)), exist_ok=True)
        command = nvcc_command(args, os.path.abspath(args.kernel), obj)
        start = time.monotonic()
        returncode, log, cached = compile_cached(args, command, text, obj)
        seconds = time.monotonic() - start
        failures = []
        if returncode != 0:
            print(log)
            print(f"FAIL {name}: nvcc exited with {returncode}")
            print("command: " + " ".join(command))
            return 1

        functions = parse_ptxas(log)
        if not functions:
            failures.append("no ptxas resource report (was -Xptxas -v honoured?)")
        for fn in functions:
            for key, what in (("stack", "bytes of stack frame"), ("spill_stores", "bytes of spill stores"),
                              ("spill_loads", "bytes of spill loads"), ("lmem", "bytes of local memory")):
                if fn[key]:
                    failures.append(f"{fn[key]} {what} in {fn['function']}")
        for code, what in PIPELINE_CODES.items():
            if re.search(r"\b" + code + r"\b", log):
                failures.append(f"ptxas {code}: {what}")
        warnings = [line for line in log.splitlines() if re.search(r"\bwarning\b", line)]
        if warnings:
            failures.append(f"{len(warnings)} compiler warning(s): generated kernels compile cleanly")

        # cuobjdump -sass runs nvdisasm, which PyPI ships beside it (nvidia-cuda-nvdisasm).
        env = dict(os.environ)
        folders = [os.path.dirname(os.path.abspath(args.cuobjdump))]
        if args.nvdisasm:
            folders.insert(0, args.nvdisasm if os.path.isdir(args.nvdisasm) else os.path.dirname(args.nvdisasm))
        env["PATH"] = os.pathsep.join(folders + [env.get("PATH", "")])
        dump = subprocess.run([args.cuobjdump, "-sass", obj], capture_output=True, text=True, env=env)
        if dump.returncode != 0:
            print(dump.stdout + dump.stderr)
            print(f"ERROR {name}: cuobjdump -sass failed (is nvdisasm installed beside cuobjdump?)")
            return 2
        sass = dump.stdout
        hgmma = len(re.findall(r"\bHGMMA\.", sass))
        local = len(re.findall(r"\b(LDL|STL)(\.\S+)?\s", sass))
        setmaxnreg = len(re.findall(r"\bUSETMAXREG\b", sass))
        if local:
            failures.append(f"{local} LDL/STL (local memory) instructions in the SASS")
        if not blackwell and args.expect_hgmma and hgmma == 0:
            failures.append("no HGMMA in the SASS: the kernel does not use wgmma")
        if blackwell:
            tcgen05 = {fact: len(re.findall(pattern, sass)) for fact, pattern in SM100A_FACTS.items()}
            failures += sm100a_failures(tcgen05, expected_utchmma, hgmma)
        backward = name.endswith(".backward.cu")
        schedule = sass_schedule.schedule_facts(
            sass, None if backward else exponentials_per_tile(with_own_headers(args.kernel, text), blackwell),
            forward=not backward)
        promise = schedule_promise(args.kernel)
        failures += sass_schedule.promise_failures(schedule, promise)
        if args.ptxemu_decode:
            failures += ptxemu_failures(args, obj)

    registers = max((fn["registers"] or 0 for fn in functions), default=0)
    # The command as a user would type it: no paths of this machine.
    placeholders = {os.path.abspath(args.cutlass_include): "<cutlass>/include",
                    os.path.abspath(args.runtime_include): "<kgen>/runtime"}
    # No compile time in the report: a rerun on the same kernel writes the same bytes.
    report = {
        "kernel": name,
        "arch": args.arch,
        "command": " ".join(["nvcc"] + [placeholders.get(part, part) for part in command[1:-4]] + ["-c", name]),
        **tool_versions(args),
        "registers": registers,
        "functions": readable(functions),
        "hgmma": hgmma,
        "setmaxnreg": setmaxnreg,
        **({"expected_utchmma": expected_utchmma, **tcgen05} if blackwell else {}),
        "local_memory_instructions": local,
        "schedule": schedule,
        **({"schedule_promise": promise} if promise else {}),
        "warnings": warnings,
        "failures": failures,
        "notes": notes,
        "passed": not failures,
    }
    if args.report:
        os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    for line in warnings + notes:
        print("  " + line)
    summary = (f"{name}: {seconds:.1f} s{' (nvcc output cached)' if cached else ''}, {registers} registers, "
               f"spills {sum(fn['spill_stores'] + fn['spill_loads'] for fn in functions)} bytes, "
               f"stack {sum(fn['stack'] for fn in functions)} bytes, HGMMA {hgmma}, setmaxnreg {setmaxnreg}")
    if blackwell:
        summary += (f", UTCHMMA {tcgen05['utchmma']} (expected {expected_utchmma}), UTCBAR {tcgen05['utcbar']}, "
                    f"LDTM {tcgen05['ldtm']}, STTM {tcgen05['sttm']}, UTMALDG {tcgen05['utmaldg']}, "
                    f"BPT.TRAP {tcgen05['traps']}")
    summary += "; schedule: " + sass_schedule.summary(schedule)
    if failures:
        print("FAIL " + summary)
        for failure in failures:
            print("  - " + failure)
        return 1
    print("PASS " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
