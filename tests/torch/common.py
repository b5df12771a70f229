"""What the kgen.torch tests share: where the kernels are, and seeded inputs.

The kernels are the feature specs of tests/cuda/specs, generated into the build tree by
`make build` (verify/cuda/CMakeLists.txt): KGEN_TORCH_KERNELS names that folder and
KGEN_TORCH_SPECS the specs' (tests/torch/CMakeLists.txt sets both).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

KERNELS = os.environ.get("KGEN_TORCH_KERNELS", "build/verify/cuda/generated")
SPECS = os.environ.get("KGEN_TORCH_SPECS", "tests/cuda/specs")
# Every optional operand (lse, segment ids, sinks), GQA, batch 2, ragged causal offset, float16,
# with a backward: the spec the CPU tests run.
SUBJECT = "sm90a_launcher_checks"


def folder(name=SUBJECT):
    return os.path.join(KERNELS, name)


def spec(name=SUBJECT):
    return reference.Spec(os.path.join(SPECS, name + ".json"))


def inputs(s, seed=0, layout="BNTH", requires_grad=False):
    """Seeded q, k, v (in `layout`, the spec's dtype), segment ids and sinks for spec `s`.
    Logits spread over several units, so that softmax rows are far from uniform; segments of 16
    and 24 tokens (one length per batch element); sinks that dominate some rows and vanish in others."""
    g = torch.Generator().manual_seed(seed)

    def tensor(heads, tokens, features):
        t = (torch.randn(s.batch, heads, tokens, features, generator=g) * 1.5).to(s.dtype)
        if layout == "BTNH":
            t = t.transpose(1, 2).contiguous()
        return t.requires_grad_(requires_grad)

    q = tensor(s.q_heads, s.q_len, s.head_dim)
    k = tensor(s.kv_heads, s.kv_len, s.head_dim)
    v = tensor(s.kv_heads, s.kv_len, s.head_dim_v)
    segment_ids = None
    if s.segment_ids:
        q_ids = torch.stack([torch.arange(s.q_len) // (16 + 8 * b) for b in range(s.batch)]).to(torch.int32)
        kv_ids = torch.stack([torch.arange(s.kv_len) // (16 + 8 * b) for b in range(s.batch)]).to(torch.int32)
        segment_ids = (q_ids, kv_ids)
    sinks = None
    if s.sinks:
        sinks = (torch.randn(s.q_heads, generator=g) * 3.0).requires_grad_(requires_grad)
    return q, k, v, segment_ids, sinks


def bnth(t, layout):
    return t if layout == "BNTH" else t.transpose(1, 2)
