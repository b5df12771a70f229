#!/usr/bin/env python3
"""Runs a checker against a copy of kgen's runtime with a planted regression in one header, so a
test can see the checker catch what a runtime change would do to every kernel (e.g. V's
shared-memory layout tiled features first again: the compile check's whole-tile load promise
must fail). The copy is OUT/runtime; the checker gets --runtime-include OUT/runtime last, which
wins over an earlier one.

  planted_runtime.py --runtime DIR --out OUT --header PATH --edit REGEX REPLACEMENT [--edit ...]
                     -- CHECKER ARGS...

Each edit (a Python regular expression over the whole header) must change it. Exit status: the
checker's (a CHECKER ending in .py runs under this Python); 2 when the edit changes nothing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--header", required=True, help="the header's path under the runtime folder")
    parser.add_argument("--edit", nargs=2, action="append", required=True, metavar=("REGEX", "REPLACEMENT"))
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]

    planted = os.path.join(args.out, "runtime")
    shutil.rmtree(planted, ignore_errors=True)
    shutil.copytree(args.runtime, planted)
    path = os.path.join(planted, args.header)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for pattern, replacement in args.edit:
        edited = re.sub(pattern, replacement, text)
        if edited == text:
            print(f"ERROR: the edit {pattern!r} changes nothing in {args.header}")
            return 2
        text = edited
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

    if command[0].endswith(".py"):
        command = [sys.executable] + command
    return subprocess.run(command + ["--runtime-include", planted]).returncode


if __name__ == "__main__":
    sys.exit(main())
