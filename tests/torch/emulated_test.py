"""kgen.torch on CPU tensors: the generated sm90a forward and backward kernels run on ptxemu
(emulated, not a GPU) through kgen.torch.load, against the float64 reference of
docs/spec-format.md §3 and §7, within the spec's tolerances; torch.library.opcheck; and
torch.compile(fullgraph=True) of a training step.

The gradient check is the float64 comparison torch.autograd.gradcheck would make if the
kernels had a float64 version (they do not: float16 and bfloat16 only): the kernels' dq, dk,
dv and dsinks against the gradients of the float64 reference, whose own gradients are
checked against finite differences by gradcheck (ReferenceTest).
"""
import math
import time
import unittest

import torch

import common
import reference
import kgen.torch


class ReferenceTest(unittest.TestCase):
    def test_reference_gradients_match_finite_differences(self):
        s = reference.Spec({"name": "tiny", "shape": {"q_heads": 2, "kv_heads": 1, "q_len": 5, "kv_len": 6,
                                                      "head_dim": 3},
                            "dtype": "float16", "softcap": 2.0, "segment_ids": True, "sinks": True,
                            "mask": {"type": "causal", "offset": 1}})
        g = torch.Generator().manual_seed(3)
        q = torch.randn(1, 2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
        k = torch.randn(1, 1, 6, 3, generator=g, dtype=torch.float64, requires_grad=True)
        v = torch.randn(1, 1, 6, 3, generator=g, dtype=torch.float64, requires_grad=True)
        sinks = torch.randn(2, generator=g, dtype=torch.float64, requires_grad=True)
        q_ids = torch.tensor([[0, 0, 1, 1, 2]])
        kv_ids = torch.tensor([[0, 1, 1, 1, 3, 3]])  # query 4 (segment 2) keeps nothing: only its sink
        function = lambda q, k, v, sinks: reference.attention(s, q, k, v, q_ids, kv_ids, sinks)  # noqa: E731
        self.assertTrue(torch.autograd.gradcheck(function, (q, k, v, sinks)))


class EmulatedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.spec = common.spec()
        cls.attention = kgen.torch.load(common.folder())
        started = time.monotonic()
        cls.attention.build("cpu")
        print(f"emulated build (or cache): {time.monotonic() - started:.1f} s")

    def reference(self, q, k, v, segment_ids, sinks, layout="BNTH"):
        ids = segment_ids or (None, None)
        return reference.attention(self.spec, common.bnth(q, layout), common.bnth(k, layout), common.bnth(v, layout),
                                   ids[0], ids[1], sinks)

    def check_forward(self, layout):
        q, k, v, segment_ids, sinks = common.inputs(self.spec, seed=1, layout=layout)
        started = time.monotonic()
        out, lse = self.attention(q, k, v, segment_ids=segment_ids, sinks=sinks, return_lse=True, layout=layout)
        print(f"{layout} forward: {time.monotonic() - started:.2f} s")
        expected_out, expected_lse = self.reference(q, k, v, segment_ids, sinks, layout)
        self.assertEqual(out.dtype, self.spec.dtype)
        self.assertEqual(out.shape, q.shape[:3] + (self.spec.head_dim_v,))
        self.assertEqual(out.stride(), q.stride(), "out is laid out as q is: no copy on the way out either")
        out_error = reference.relative_error(common.bnth(out, layout), expected_out)
        lse_error = reference.lse_error(common.bnth(lse.unsqueeze(-1), layout).squeeze(-1), expected_lse)
        print(f"{layout} out error {out_error:.2e}, lse error {lse_error:.2e}")
        self.assertLessEqual(out_error, reference.OUT_TOLERANCE)
        self.assertLessEqual(lse_error, reference.LSE_TOLERANCE)
        # The check can fail: a kernel that ignored the sinks would be this far off.
        sinkless, _ = reference.attention(self.spec, *(common.bnth(t, layout) for t in (q, k, v)),
                                          *(segment_ids or (None, None)), None)
        self.assertGreater(reference.relative_error(common.bnth(out, layout), sinkless), reference.OUT_TOLERANCE)
        return out

    def test_forward_bnth(self):
        self.check_forward("BNTH")

    def test_forward_btnh_runs_on_btnh_strides(self):
        out = self.check_forward("BTNH")
        self.assertTrue(out.is_contiguous(), "a BTNH call returns contiguous BTNH memory")

    def test_backward_matches_float64_gradients(self):
        for layout in ("BNTH", "BTNH"):
            with self.subTest(layout=layout):
                q, k, v, segment_ids, sinks = common.inputs(self.spec, seed=2, layout=layout, requires_grad=True)
                g = torch.Generator().manual_seed(5)
                weights = torch.randn(q.shape[:3] + (self.spec.head_dim_v,), generator=g)
                started = time.monotonic()
                out = self.attention(q, k, v, segment_ids=segment_ids, sinks=sinks, layout=layout)
                (out.float() * weights).sum().backward()
                print(f"{layout} forward + backward: {time.monotonic() - started:.2f} s")
                kernel_grads = [q.grad, k.grad, v.grad, sinks.grad]

                leaves = [t.detach().double().requires_grad_() for t in (q, k, v, sinks)]
                expected_out, _ = self.reference(*leaves[:3], segment_ids, leaves[3], layout)
                (expected_out * common.bnth(weights, layout).double()).sum().backward()
                for name, got, leaf in zip(("dq", "dk", "dv", "dsinks"), kernel_grads, leaves):
                    self.assertEqual(got.shape, leaf.shape, name)
                    self.assertEqual(got.dtype, torch.float32 if name == "dsinks" else self.spec.dtype, name)
                    error = reference.relative_error(got, leaf.grad)
                    print(f"{layout} {name} error {error:.2e}")
                    self.assertLessEqual(error, reference.GRADIENT_TOLERANCE, name)
                self.assertEqual(q.grad.stride(), q.stride(), "dq is laid out as q is")
                # The check can fail: the gradients of a kernel that ignored the segment ids
                # would be this far off.
                leaves = [t.detach().double().requires_grad_() for t in (q, k, v, sinks)]
                unsegmented, _ = self.reference(*leaves[:3], None, leaves[3], layout)
                (unsegmented * common.bnth(weights, layout).double()).sum().backward()
                self.assertGreater(reference.relative_error(q.grad, leaves[0].grad), reference.GRADIENT_TOLERANCE)

    def test_lse_carries_no_gradient(self):
        q, k, v, segment_ids, sinks = common.inputs(self.spec, seed=3, requires_grad=True)
        out, lse = self.attention(q, k, v, segment_ids=segment_ids, sinks=sinks, return_lse=True)
        self.assertTrue(out.requires_grad)
        self.assertFalse(lse.requires_grad, "the generated backward takes no gradient of lse (§7)")

    def test_opcheck(self):
        q, k, v, segment_ids, sinks = common.inputs(self.spec, seed=4, requires_grad=True)
        started = time.monotonic()
        torch.library.opcheck(self.attention.forward_op, (q, k, v, *segment_ids, sinks))
        out, lse = self.attention.forward_op(q, k, v, *segment_ids, sinks)
        dout = torch.randn(out.shape, generator=torch.Generator().manual_seed(6)).to(out.dtype)
        torch.library.opcheck(self.attention.backward_op,
                              (q.detach(), k.detach(), v.detach(), out.detach(), dout, lse.detach(), *segment_ids,
                               sinks.detach()))
        print(f"opcheck of both operators: {time.monotonic() - started:.1f} s")

    def test_compile_fullgraph(self):
        q, k, v, segment_ids, sinks = common.inputs(self.spec, seed=7, requires_grad=True)

        def loss(q, k, v, sinks):
            out = self.attention(q, k, v, segment_ids=segment_ids, sinks=sinks)
            return out.float().square().mean()

        compiled = torch.compile(loss, fullgraph=True)
        started = time.monotonic()
        value = compiled(q, k, v, sinks)
        value.backward()
        print(f"torch.compile(fullgraph=True) forward + backward, first call: {time.monotonic() - started:.1f} s")
        compiled_grads = [t.grad.clone() for t in (q, k, v, sinks)]
        for t in (q, k, v, sinks):
            t.grad = None
        eager = loss(q, k, v, sinks)
        eager.backward()
        self.assertTrue(math.isclose(value.item(), eager.item(), rel_tol=1e-3), (value.item(), eager.item()))
        for name, compiled_grad, t in zip(("dq", "dk", "dv", "dsinks"), compiled_grads, (q, k, v, sinks)):
            # The same kernels on the same inputs; dq and dsinks are summed by f32 atomics in an
            # order ptxemu's scheduler varies, so equal within the §7 tolerance, not bit for bit.
            self.assertLessEqual(reference.relative_error(compiled_grad, t.grad), reference.GRADIENT_TOLERANCE, name)


if __name__ == "__main__":
    unittest.main()
