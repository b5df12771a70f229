"""The function every kgen kernel computes (docs/spec-format.md §2, §3), in float64 torch, for
the kgen.torch tests: its autograd gradients are §7's formulas, so kernels' forward and
backward are both compared with it. It is written from the spec text, independently of the
C++ reference (verify/dense_reference.cc), and checked against finite differences
(torch.autograd.gradcheck) in kgen_torch_test.py.
"""
import json
import math

import torch


def allowed(mask, q_len, kv_len):
    """allowed(i, j) of §2 as a [q_len, kv_len] bool tensor (one head's mask)."""
    i = torch.arange(q_len).unsqueeze(1)
    j = torch.arange(kv_len).unsqueeze(0)
    kind = mask["type"]
    if kind == "full":
        return torch.ones(q_len, kv_len, dtype=torch.bool)
    if kind == "causal":
        return j <= i + mask.get("offset", 0)
    if kind == "local":
        offset, keep = mask.get("offset", 0), torch.ones(q_len, kv_len, dtype=torch.bool)
        if mask["left"] is not None:
            keep = keep & (j >= i + offset - mask["left"])
        if mask["right"] is not None:
            keep = keep & (j <= i + offset + mask["right"])
        return keep
    if kind == "chunked_causal":
        return (i // mask["chunk"] == j // mask["chunk"]) & (j <= i)
    if kind == "prefix_lm":
        return (j < mask["prefix"]) | (j <= i)
    if kind == "explicit":
        return torch.tensor([[c == "1" for c in row] for row in mask["rows"]], dtype=torch.bool)
    if kind in ("and", "or"):
        parts = [allowed(m, q_len, kv_len) for m in mask["masks"]]
        combined = parts[0]
        for part in parts[1:]:
            combined = combined & part if kind == "and" else combined | part
        return combined
    raise ValueError(f"mask type {kind} is not in this reference")


class Spec:
    """The parts of a spec the function depends on."""

    def __init__(self, spec):
        """`spec`: a spec file's path, or its JSON as a dict."""
        if not isinstance(spec, dict):
            with open(spec, encoding="utf-8") as f:
                spec = json.load(f)
        shape = spec["shape"]
        self.name = spec["name"]
        self.batch = shape.get("batch", 1)
        self.q_heads = shape["q_heads"]
        self.kv_heads = shape.get("kv_heads", self.q_heads)
        self.q_len = shape["q_len"]
        self.kv_len = shape.get("kv_len", self.q_len)
        self.head_dim = shape["head_dim"]
        self.head_dim_v = shape.get("head_dim_v", self.head_dim)
        self.dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[spec["dtype"]]
        self.scale = spec.get("scale", 1.0 / math.sqrt(self.head_dim))
        self.softcap = spec.get("softcap")
        self.segment_ids = spec.get("segment_ids", False)
        self.sinks = spec.get("sinks", False)
        mask = spec.get("mask", {"type": "full"})
        heads = mask["masks"] if mask["type"] == "per_head" else [mask] * self.q_heads
        self.mask = torch.stack([allowed(m, self.q_len, self.kv_len) for m in heads])  # [q_heads, q_len, kv_len]


def attention(spec, q, k, v, q_segment_ids=None, kv_segment_ids=None, sinks=None):
    """out [b, h, q_len, head_dim_v] and lse [b, h, q_len] of §3 in float64, BNTH inputs.
    Differentiable: its gradients are §7's."""
    q, k, v = q.double(), k.double(), v.double()
    group = spec.q_heads // spec.kv_heads
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    s = spec.scale * (q @ k.transpose(-1, -2))
    if spec.softcap is not None:
        s = spec.softcap * torch.tanh(s / spec.softcap)
    keep = spec.mask.unsqueeze(0).expand(spec.batch, -1, -1, -1)
    if q_segment_ids is not None:
        keep = keep & (q_segment_ids[:, None, :, None] == kv_segment_ids[:, None, None, :])
    masked = s.masked_fill(~keep, -math.inf)
    m = masked.amax(dim=-1)
    if sinks is not None:
        m = torch.maximum(m, sinks.double()[None, :, None].expand_as(m))
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m)).detach()  # any finite shift; empty rows: 0
    p = torch.exp(masked - m.unsqueeze(-1))  # exp(-inf) = 0 off the kept keys
    l = p.sum(dim=-1)
    if sinks is not None:
        l = l + torch.exp(sinks.double()[None, :, None] - m)
    empty = l == 0  # nothing kept and no sink: out 0, lse -inf
    safe_l = torch.where(empty, torch.ones_like(l), l)
    out = (p @ v) / safe_l.unsqueeze(-1)
    lse = torch.where(empty, torch.full_like(l, -math.inf), m + torch.log(safe_l))
    return out, lse


def relative_error(x, reference):
    """max|x - ref| / max|ref| (§3, §7); an exact match is required of an all-zero reference."""
    x, reference = x.double(), reference.double()
    scale = reference.abs().max()
    difference = (x - reference).abs().max()
    if scale == 0:
        return 0.0 if difference == 0 else math.inf
    return float(difference / scale)


def lse_error(x, reference):
    """max|lse - ref| with -inf against -inf no error (§3)."""
    x, reference = x.double(), reference.double()
    both = torch.isinf(x) & torch.isinf(reference) & (torch.sign(x) == torch.sign(reference))
    difference = torch.where(both, torch.zeros_like(x), (x - reference).abs())
    return float(difference.max())


OUT_TOLERANCE = 2e-2  # §3, bfloat16 and float16
LSE_TOLERANCE = 1e-3
GRADIENT_TOLERANCE = 3e-2  # §7
