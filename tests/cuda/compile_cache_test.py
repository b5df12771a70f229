#!/usr/bin/env python3
"""The compile cache of verify/cuda/compile_check.py follows content: a second check of the
same kernel takes nvcc's cached output and reports the same facts; a changed kernel, a
changed header it includes or a changed header of a runtime folder it includes is compiled
afresh, a change to a runtime folder it does not include is not; a failed compile is never
cached.

  compile_cache_test.py CHECK.py KERNEL.cu CHECKER-ARGS...   (the kernel compiles cleanly)
"""
import os
import shutil
import subprocess
import sys
import tempfile

CACHED = "(nvcc output cached)"


def main():
    check, kernel, tool_args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory(prefix="kgen-cache-test-") as scratch:
        env = dict(os.environ, KGEN_COMPILE_CACHE=os.path.join(scratch, "cache"))
        runtime = os.path.join(scratch, "runtime")
        os.makedirs(os.path.join(runtime, "sm90a"))
        with open(os.path.join(runtime, "sm90a", "extra.cuh"), "w") as f:
            f.write("// a runtime header\n")
        os.makedirs(os.path.join(runtime, "other"))
        with open(os.path.join(runtime, "other", "unrelated.cuh"), "w") as f:
            f.write("// another target's runtime header, which the kernel does not include\n")
        source = os.path.join(scratch, "kernel.cu")
        shutil.copyfile(kernel, source)
        with open(os.path.join(scratch, "local.h"), "w") as f:
            f.write("// a header beside the kernel\n")
        with open(source, "a") as f:
            f.write('#include "local.h"\n#include <sm90a/extra.cuh>\n')

        def run(report):
            # After the tools' arguments: the last --runtime-include wins.
            result = subprocess.run([sys.executable, check, source] + tool_args +
                                    ["--runtime-include", runtime, "--report", os.path.join(scratch, report)],
                                    capture_output=True, text=True, env=env)
            print(result.stdout + result.stderr, end="")
            return result.returncode, CACHED in result.stdout

        failures = []

        def expect(what, outcome, status, cached):
            if outcome != (status, cached):
                failures.append(f"{what}: exit status {outcome[0]}, cached {outcome[1]}; expected {status}, {cached}")

        expect("first check", run("first.json"), 1, False)
        first_status = run("second.json")
        expect("unchanged kernel", first_status, 1, True)
        with open(os.path.join(scratch, "first.json")) as a, open(os.path.join(scratch, "second.json")) as b:
            if a.read() != b.read():
                failures.append("the cached check reported other facts than the compiled one")
        with open(source, "a") as f:
            f.write("// changed\n")
        expect("changed kernel", run("r.json"), 1, False)
        with open(os.path.join(scratch, "local.h"), "a") as f:
            f.write("// changed\n")
        expect("changed local header", run("r.json"), 1, False)
        with open(os.path.join(runtime, "sm90a", "extra.cuh"), "a") as f:
            f.write("// changed\n")
        expect("changed runtime header", run("r.json"), 1, False)
        expect("all unchanged again", run("r.json"), 1, True)
        with open(os.path.join(runtime, "other", "unrelated.cuh"), "a") as f:
            f.write("// changed\n")
        expect("changed runtime header the kernel does not include", run("r.json"), 1, True)
        with open(source, "a") as f:
            f.write("this does not compile\n")
        expect("broken kernel", run("r.json"), 1, False)
        expect("broken kernel again (not cached)", run("r.json"), 1, False)
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
