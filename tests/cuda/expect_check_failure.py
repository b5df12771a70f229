#!/usr/bin/env python3
"""Runs a checker (verify/cuda/compile_check.py, kgen-format --check, ...) on a planted
defect and passes only when the checker fails (exit status 1) with every expected finding in
its output.

  expect_check_failure.py --expect TEXT [--expect TEXT ...] -- CHECKER ARGS...

A CHECKER ending in .py runs under this Python.
"""
import subprocess
import sys


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__)
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    expected = [options[k + 1] for k in range(len(options) - 1) if options[k] == "--expect"]
    if command[0].endswith(".py"):
        command = [sys.executable] + command
    result = subprocess.run(command, capture_output=True, text=True)
    output = result.stdout + result.stderr
    print(output)
    if result.returncode != 1:
        print(f"expected the checker to fail (exit status 1), got {result.returncode}")
        return 1
    missing = [text for text in expected if text not in output]
    if missing:
        print("the checker failed, but without these findings: " + "; ".join(missing))
        return 1
    print("the checker rejected the planted defect as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
