#!/usr/bin/env python3
"""The PyTorch side of the sm90a benchmark (bench/sm90a_vs_torch.sh): for each benchmark
spec (bench/specs/), times torch's scaled_dot_product_attention with the cuDNN and the
flash backend where the spec's attention is expressible there, and FlexAttention with the
same mask (a block mask, so empty tiles are skipped) and softcap. Prints one JSON object
per (spec, backend) line; effective TFLOP/s count only kept (i, j) pairs, as the kgen
harness does.

  python3 bench/torch_baselines.py SPEC.json... [--iterations N] [--document-length N]
                                   [--device cuda|cpu]

The specs' masks are the benchmark families only: causal (offset 0) or a causal sliding
window (local with right 0), optionally softcap and segment ids (documents of
--document-length tokens, ids i // length for queries and keys alike). --device cpu runs
everything small-scale on the CPU to check this script, not to time it.
"""
import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


class Attention:
    """What a benchmark spec computes, in torch terms."""

    def __init__(self, spec, document_length):
        shape = spec["shape"]
        self.name = spec["name"]
        self.batch = shape.get("batch", 1)
        self.heads = shape["q_heads"]
        if shape.get("kv_heads", self.heads) != self.heads:
            raise ValueError(f"{self.name}: benchmark specs are MHA (kv_heads = q_heads)")
        self.length = shape["q_len"]
        if shape.get("kv_len", self.length) != self.length:
            raise ValueError(f"{self.name}: benchmark specs have kv_len = q_len")
        self.head_dim = shape["head_dim"]
        if shape.get("head_dim_v", self.head_dim) != self.head_dim:
            raise ValueError(f"{self.name}: benchmark specs have head_dim_v = head_dim")
        self.dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[spec["dtype"]]
        self.scale = spec.get("scale", 1.0 / math.sqrt(self.head_dim))
        self.softcap = spec.get("softcap")
        mask = spec["mask"]
        if mask["type"] == "causal" and mask.get("offset", 0) == 0:
            self.window = None
        elif mask["type"] == "local" and mask.get("right") == 0 and mask.get("offset", 0) == 0:
            self.window = mask["left"] + 1  # keys i - left .. i
        else:
            raise ValueError(f"{self.name}: mask {mask} is not a benchmark family")
        self.document_length = document_length if spec.get("segment_ids") else None

    def allowed_per_row(self):
        """Kept keys of each query row i (same for every batch and head)."""
        rows = torch.arange(self.length, dtype=torch.int64)
        first = torch.zeros_like(rows)
        if self.window is not None:
            first = torch.clamp(rows - self.window + 1, min=0)
        if self.document_length is not None:
            first = torch.maximum(first, rows // self.document_length * self.document_length)
        return rows - first + 1

    def kept_pairs(self):
        return int(self.allowed_per_row().sum()) * self.batch * self.heads

    def mask_mod(self, device):
        window, document_length = self.window, self.document_length
        documents = None
        if document_length is not None:
            documents = torch.arange(self.length, device=device) // document_length

        def mask(b, h, q, kv):
            keep = q >= kv
            if window is not None:
                keep = keep & (q - kv < window)
            if documents is not None:
                keep = keep & (documents[q] == documents[kv])
            return keep

        return mask

    def score_mod(self):
        if self.softcap is None:
            return None
        cap = self.softcap

        def capped(score, b, h, q, kv):  # score is scale * q.k already
            return cap * torch.tanh(score / cap)

        return capped

    def plain_causal(self):
        """Whether SDPA's is_causal alone says it all."""
        return self.window is None and self.document_length is None and self.softcap is None


def median_ms(run, iterations, device):
    for _ in range(3):
        run()
    if device == "cpu":
        return float("nan")
    times = []
    for _ in range(iterations):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def backends(attention, q, k, v, device):
    """(name, callable or a reason it does not apply)."""
    found = []
    for name, backend in (("torch_sdpa_cudnn", SDPBackend.CUDNN_ATTENTION), ("torch_sdpa_flash", SDPBackend.FLASH_ATTENTION)):
        if device == "cpu":
            backend = SDPBackend.MATH
        if not attention.plain_causal():
            found.append((name, "SDPA has no sliding window, softcap or document mask without a dense mask"))
            continue

        def sdpa(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=attention.scale)

        found.append((name, sdpa))
    block_mask = create_block_mask(attention.mask_mod(device), None, None, attention.length, attention.length, device=device)
    compiled = torch.compile(flex_attention, dynamic=False)
    score_mod = attention.score_mod()

    def flex():
        return compiled(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=attention.scale)

    found.append(("torch_flex_attention", flex))
    return found


def reference(attention, q, k, v):
    """Dense float32 attention with the same mask and softcap (small sizes only)."""
    s = torch.einsum("bhid,bhjd->bhij", q.float(), k.float()) * attention.scale
    if attention.softcap is not None:
        s = attention.softcap * torch.tanh(s / attention.softcap)
    i = torch.arange(attention.length, device=q.device)
    keep = attention.mask_mod(q.device)(None, None, i[:, None], i[None, :])
    s = s.masked_fill(~keep, float("-inf"))
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(s, dim=-1), v.float())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--document-length", type=int, default=1024)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    torch.manual_seed(0)
    status = 0
    for path in args.specs:
        with open(path) as f:
            attention = Attention(json.load(f), args.document_length)
        shape = (attention.batch, attention.heads, attention.length, attention.head_dim)
        q, k, v = (torch.randn(shape, device=args.device, dtype=attention.dtype) for _ in range(3))
        flops = 4.0 * attention.kept_pairs() * attention.head_dim
        expected = reference(attention, q, k, v) if args.device == "cpu" else None
        for name, run in backends(attention, q, k, v, args.device):
            record = {"spec": attention.name, "backend": name}
            if isinstance(run, str):
                record["skipped"] = run
            else:
                try:
                    out = run()
                    if expected is not None:  # the script's own check: same function as kgen's
                        error = float((out.float() - expected).norm() / expected.norm())
                        record["relative_error_vs_float32"] = error
                        if not error < 2e-2:
                            status = 1
                    ms = median_ms(run, args.iterations, args.device)
                    record.update({"median_ms": ms, "tflops": flops / (ms * 1e-3) / 1e12})
                except Exception as error:  # a backend that refuses this shape or mask
                    record["skipped"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            print(json.dumps(record), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
