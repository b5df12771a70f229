#!/usr/bin/env python3
"""Turns bench/sm90a_vs_torch.sh's results (JSON lines) into a Markdown table (stdout) and
a grouped bar plot (PNG): effective TFLOP/s per benchmark spec and backend, and kgen's
speed-up over FlexAttention.

  python3 bench/plot_sm90a.py RESULTS.jsonl PLOT.png
"""
import json
import sys

BACKENDS = ["kgen_sm90a", "torch_sdpa_cudnn", "torch_sdpa_flash", "torch_flex_attention"]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    specs = list(dict.fromkeys(r["spec"] for r in records))
    tflops = {(r["spec"], r["backend"]): r.get("tflops") for r in records}
    failed = [r["spec"] for r in records if r["backend"] == "kgen_sm90a" and not r.get("passed")]

    print("| spec | " + " | ".join(BACKENDS) + " | kgen / flex |")
    print("|---|" + "---|" * (len(BACKENDS) + 1))
    for spec in specs:
        cells = [f"{tflops[(spec, b)]:.0f}" if tflops.get((spec, b)) else "n/a" for b in BACKENDS]
        kgen, flex = tflops.get((spec, "kgen_sm90a")), tflops.get((spec, "torch_flex_attention"))
        ratio = f"{kgen / flex:.2f}x" if kgen and flex else "n/a"
        print(f"| {spec} | " + " | ".join(cells) + f" | {ratio} |")
    if failed:
        print(f"\nkgen kernels that did not match the reference: {', '.join(failed)}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(max(8, 0.9 * len(specs)), 4.5))
    width = 0.8 / len(BACKENDS)
    for k, backend in enumerate(BACKENDS):
        values = [tflops.get((spec, backend)) or 0 for spec in specs]
        axes.bar([x + k * width for x in range(len(specs))], values, width, label=backend)
    axes.set_xticks([x + 0.4 - width / 2 for x in range(len(specs))])
    axes.set_xticklabels([s.removeprefix("bench_") for s in specs], rotation=45, ha="right")
    axes.set_ylabel("effective TFLOP/s (kept pairs only)")
    axes.set_title("attention forward, bf16, head_dim 128, 16k tokens per run")
    axes.legend()
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=120)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
