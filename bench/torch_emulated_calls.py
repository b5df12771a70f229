#!/usr/bin/env python3
"""Times kgen.torch calls on CPU tensors: the generated sm90a kernels emulated by ptxemu, not a
GPU (docs/benchmarks.md, "kgen.torch on the CPU"). Per kernel folder: the build (or the cache
hit), the first forward (it loads and decodes the PTX), then the median of --repeat forwards
and of --repeat forward+backward steps, in wall seconds and in this process's CPU seconds
(ptxemu runs on one thread; on a loaded machine wall exceeds CPU). Prints a Markdown table.

  .venv-torch/bin/python bench/torch_emulated_calls.py FOLDER... [--repeat N]
  .venv-torch/bin/python bench/torch_emulated_calls.py --readme-example [FOLDER]

with PYTHONPATH=python (or kgen installed); FOLDER as `make gen` writes it. --readme-example
runs README.md's kgen.torch example line by line (with FOLDER for generated/splash if given),
each line timed, the build before the first call timed apart.
"""
import argparse
import os
import re
import statistics
import sys
import time

import torch

import kgen.torch


def inputs(i, requires_grad):
    g = torch.Generator().manual_seed(0)

    def tensor(heads, tokens, features):
        return torch.randn(i.batch, heads, tokens, features, generator=g).to(i.dtype).requires_grad_(requires_grad)

    kwargs = {}
    if i.segment_ids:
        kwargs["segment_ids"] = (torch.arange(i.q_len).div(32, rounding_mode="floor").int().expand(i.batch, -1),
                                 torch.arange(i.kv_len).div(32, rounding_mode="floor").int().expand(i.batch, -1))
    if i.sinks:
        kwargs["sinks"] = torch.zeros(i.q_heads).requires_grad_(requires_grad)
    return (tensor(i.q_heads, i.q_len, i.head_dim), tensor(i.kv_heads, i.kv_len, i.head_dim),
            tensor(i.kv_heads, i.kv_len, i.head_dim_v)), kwargs


def timed(function):
    wall, cpu = time.monotonic(), time.process_time()
    function()
    return time.monotonic() - wall, time.process_time() - cpu


def readme_example(folder):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    code = re.search(r"```python\n(.*?)```", text[text.index("<!-- kgen.torch example"):], re.DOTALL).group(1)
    if folder:
        code = code.replace('"generated/splash"', repr(folder))
    namespace = {}
    for line in code.strip().splitlines():
        wall, cpu = timed(lambda: exec(line, namespace))  # noqa: S102
        print(f"{wall:8.1f} s wall {cpu:8.1f} s CPU  {line}", flush=True)
        if line.startswith("attention ="):
            wall, cpu = timed(lambda: namespace["attention"].build("cpu"))
            print(f"{wall:8.1f} s wall {cpu:8.1f} s CPU  (attention.build('cpu'): nvcc-emu, or the cache)", flush=True)
    for name in ("q", "k", "v"):
        grad = namespace[name].grad
        print(f"{name}.grad {tuple(grad.shape)} {grad.dtype}, finite: {bool(grad.isfinite().all())}, "
              f"max |.| {float(grad.abs().max()):.3g}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--readme-example", action="store_true")
    args = parser.parse_args()
    if args.readme_example:
        return readme_example(args.folders[0] if args.folders else None)
    print("| kernel | q, kv | build s | first forward s | forward s (CPU s) | forward + backward s (CPU s) |")
    print("|---|---|---|---|---|---|")
    for folder in args.folders:
        attention = kgen.torch.load(folder)
        i = attention.interface
        build, _ = timed(lambda: attention.build("cpu"))
        tensors, kwargs = inputs(i, requires_grad=False)
        first, _ = timed(lambda: attention(*tensors, **kwargs))
        forward = [timed(lambda: attention(*tensors, **kwargs)) for _ in range(args.repeat)]
        step = "—"
        if i.backward:
            tensors, kwargs = inputs(i, requires_grad=True)
            steps = [timed(lambda: attention(*tensors, **kwargs).float().square().mean().backward())
                     for _ in range(args.repeat)]
            step = (f"{statistics.median(s[0] for s in steps):.2f} "
                    f"({statistics.median(s[1] for s in steps):.2f})")
        print(f"| {i.name} | [{i.batch}, {i.q_heads}, {i.q_len}, {i.head_dim}], [{i.batch}, {i.kv_heads}, {i.kv_len}, "
              f"{i.head_dim_v}] | {build:.1f} | {first:.2f} | {statistics.median(f[0] for f in forward):.2f} "
              f"({statistics.median(f[1] for f in forward):.2f}) | {step} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
