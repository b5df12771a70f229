"""kgen.torch's argument errors: each names the argument, what was found and what the spec
fixed, and, where only a new kernel helps, the `make gen` command. Nothing here runs a kernel:
every error comes before the first build or launch, and the operators' fake implementations
run on meta tensors."""
import unittest

import torch

import common
import kgen.torch


class ArgumentsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.spec = common.spec()
        cls.attention = kgen.torch.load(common.folder())
        cls.regenerate = cls.attention.interface.regenerate

    def arguments(self, layout="BNTH"):
        q, k, v, segment_ids, sinks = common.inputs(self.spec, layout=layout)
        return dict(q=q, k=k, v=v, segment_ids=segment_ids, sinks=sinks, layout=layout)

    def refused(self, *fragments, regenerate=False, **changes):
        arguments = self.arguments(changes.pop("layout", "BNTH"))
        arguments.update(changes)
        with self.assertRaises(kgen.torch.ArgumentError) as caught:
            self.attention(**arguments)
        message = str(caught.exception)
        for fragment in fragments:
            self.assertIn(fragment, message)
        self.assertEqual(self.regenerate in message, regenerate, message)
        return message

    def test_interface_is_the_manifest_signature(self):
        i = self.attention.interface
        self.assertEqual((i.batch, i.q_heads, i.kv_heads, i.q_len, i.kv_len, i.head_dim, i.head_dim_v),
                         (2, 4, 2, 192, 256, 64, 64))
        self.assertEqual(i.dtype, torch.float16)
        self.assertTrue(i.lse and i.segment_ids and i.sinks and i.backward)
        self.assertRegex(i.regenerate, r"^make gen SPEC=\S+sm90a_launcher_checks\.json$")

    def test_wrong_shape_names_the_argument_and_the_make_gen_command(self):
        q = torch.zeros(2, 4, 190, 64, dtype=torch.float16)
        message = self.refused("q: found shape (2, 4, 190, 64); the spec fixed (2, 4, 192, 64) = "
                               "[batch, q_heads, q_len, head_dim] in layout BNTH", regenerate=True, q=q)
        self.assertIn(self.attention.interface.spec, message)

    def test_wrong_shape_in_btnh_speaks_btnh(self):
        k = torch.zeros(2, 256, 2, 32, dtype=torch.float16)
        self.refused("k: found shape (2, 256, 2, 32); the spec fixed (2, 256, 2, 64) = "
                     "[batch, kv_len, kv_heads, head_dim] in layout BTNH", regenerate=True, layout="BTNH", k=k)

    def test_a_bnth_tensor_given_as_btnh_says_which_layout_it_fits(self):
        arguments = self.arguments("BNTH")
        with self.assertRaises(kgen.torch.ArgumentError) as caught:
            self.attention(**dict(arguments, layout="BTNH"))
        self.assertIn("q: found shape (2, 4, 192, 64); the spec fixed (2, 192, 4, 64) = [batch, q_len, q_heads, "
                      "head_dim] in layout BTNH", str(caught.exception))
        self.assertIn("That is the spec's shape in layout BNTH: pass layout=\"BNTH\"", str(caught.exception))
        self.assertNotIn(self.regenerate, str(caught.exception))

    def test_wrong_rank(self):
        self.refused("v: found shape (2, 256, 64); the spec fixed (2, 2, 256, 64)", regenerate=True,
                     v=torch.zeros(2, 256, 64, dtype=torch.float16))

    def test_wrong_dtype(self):
        q = torch.zeros(2, 4, 192, 64, dtype=torch.bfloat16)
        self.refused("q: found dtype bfloat16; the spec fixed float16 (\"dtype\" in", regenerate=True, q=q)

    def test_strides_the_kernel_cannot_read(self):
        wide = torch.zeros(2, 4, 192, 128, dtype=torch.float16)
        self.refused("q: found strides (98304, 24576, 128, 2)", "head_dim contiguous", "pass t.contiguous()",
                     q=wide[..., ::2])
        odd = torch.zeros(2, 2, 256, 68, dtype=torch.float16)[..., :64]  # rows 68 elements apart: not 16 bytes
        self.refused("k: found strides (34816, 17408, 68, 1)", "multiples of 8 elements", k=odd)

    def test_expanded_size_one_dimensions_are_fine(self):
        # A size-1 dimension's stride is never read (here: a batch of one would have any).
        q = torch.zeros(2, 4, 192, 64, dtype=torch.float16)
        self.assertTrue(kgen.torch.checks.kernel_readable(q[:1].expand(1, 4, 192, 64)))
        self.assertFalse(kgen.torch.checks.kernel_readable(q[:1].expand(2, 4, 192, 64)))  # stride 0

    def test_segment_ids(self):
        self.refused('segment_ids: found none; the spec fixed "segment_ids": true',
                     "pass segment_ids=(q_segment_ids [batch, q_len], kv_segment_ids [batch, kv_len])", segment_ids=None)
        q_ids, kv_ids = self.arguments()["segment_ids"]
        self.refused("segment_ids: q_segment_ids has dtype float32; the kernels compare int32 ids",
                     segment_ids=(q_ids.float(), kv_ids))
        self.refused("segment_ids: found one array, which serves both sides only when q_len == kv_len; here q_len "
                     "192 != kv_len 256: pass segment_ids=(q_segment_ids, kv_segment_ids)", segment_ids=q_ids)
        self.refused("segment_ids: kv_segment_ids has shape (2, 192); the spec fixed (2, 256) = [batch, kv_len]",
                     regenerate=True, segment_ids=(q_ids, q_ids))

    def test_segment_ids_come_as_a_pair(self):
        q_ids, _ = self.arguments()["segment_ids"]
        self.refused("segment_ids: found a sequence of 1; expected (q_segment_ids, kv_segment_ids)", segment_ids=[q_ids])

    def test_integer_ids_and_floating_sinks_are_converted(self):
        # Meta tensors: the operator's fake implementation checks what reaches it (int32, float32).
        arguments = {name: t.to("meta") for name, t in self.arguments().items() if name in ("q", "k", "v")}
        q_ids, kv_ids = self.arguments()["segment_ids"]
        out = self.attention(**arguments, segment_ids=(q_ids.long().to("meta"), kv_ids.to(torch.int16).to("meta")),
                             sinks=torch.zeros(4, dtype=torch.bfloat16, device="meta"))
        self.assertEqual(out.shape, (2, 4, 192, 64))

    def test_backward_operator_checks_the_residuals(self):
        q, k, v, (q_ids, kv_ids), sinks = common.inputs(self.spec)
        q, k, v, q_ids, kv_ids, sinks = [t.to("meta") for t in (q, k, v, q_ids, kv_ids, sinks)]
        out, lse = self.attention.forward_op(q, k, v, q_ids, kv_ids, sinks)
        with self.assertRaisesRegex(kgen.torch.ArgumentError, r"lse: found shape \(2, 4, 191\); expected \(2, 4, 192\)"):
            self.attention.backward_op(q, k, v, out, out, lse[..., 1:], q_ids, kv_ids, sinks)
        with self.assertRaisesRegex(kgen.torch.ArgumentError, "dout: found dtype float32; expected float16"):
            self.attention.backward_op(q, k, v, out, out.float(), lse, q_ids, kv_ids, sinks)

    def test_operators_take_what_the_kernels_take(self):
        # Called directly, the operators convert nothing: int32 ids, float32 sinks, both ids or neither.
        q, k, v, (q_ids, kv_ids), sinks = common.inputs(self.spec)
        q, k, v, q_ids, kv_ids, sinks = [t.to("meta") for t in (q, k, v, q_ids, kv_ids, sinks)]
        with self.assertRaisesRegex(kgen.torch.ArgumentError, "q_segment_ids: found dtype int64; the operator takes int32"):
            self.attention.forward_op(q, k, v, q_ids.long(), kv_ids, sinks)
        with self.assertRaisesRegex(kgen.torch.ArgumentError, "found one of q_segment_ids and kv_segment_ids"):
            self.attention.forward_op(q, k, v, q_ids, None, sinks)

    def test_sinks(self):
        self.refused('sinks: found none; the spec fixed "sinks": true', "pass sinks of shape (4,) = [q_heads]",
                     sinks=None)
        self.refused("sinks: found dtype int32; expected floating point", sinks=torch.zeros(4, dtype=torch.int32))
        self.refused("sinks: found shape (2,); the spec fixed (4,) = [q_heads]", sinks=torch.zeros(2))

    def test_devices_and_layout_names(self):
        self.refused("found the arguments on different devices: q on cpu, k on meta", k=torch.zeros(
            2, 2, 256, 64, dtype=torch.float16, device="meta"))
        with self.assertRaisesRegex(kgen.torch.ArgumentError, "layout: found 'BHTD'; expected \"BNTH\" .* or \"BTNH\""):
            self.attention(**dict(self.arguments(), layout="BHTD"))

    def test_features_the_spec_lacks(self):
        full = kgen.torch.load(common.folder("sm90a_full_192"))  # no lse, no segment ids, no sinks, no backward
        s = common.spec("sm90a_full_192")
        q, k, v, _, _ = common.inputs(s)
        for kwargs, fragment in (({"return_lse": True}, 'writes no lse: add "outputs": {"lse": true}'),
                                 ({"sinks": torch.zeros(2)}, 'sinks: found an argument; the spec has none'),
                                 ({"segment_ids": (torch.zeros(1, 256, dtype=torch.int32),) * 2},
                                  'segment_ids: found an argument; the spec has none')):
            with self.subTest(fragment=fragment):
                with self.assertRaises(kgen.torch.ArgumentError) as caught:
                    full(q, k, v, **kwargs)
                self.assertIn(fragment, str(caught.exception))
                self.assertIn(full.interface.regenerate, str(caught.exception))
        # No backward kernel: the gradient says so (meta tensors: the fake forward, nothing runs).
        meta = [t.to("meta").requires_grad_() for t in (q, k, v)]
        out = full(*meta)
        with self.assertRaisesRegex(NotImplementedError, 'has no backward kernel: add "backward": true'):
            out.sum().backward()

    def test_operators_trace_on_meta_tensors(self):
        q, k, v, (q_ids, kv_ids), sinks = common.inputs(self.spec)
        meta = [t.to("meta") for t in (q, k, v, q_ids, kv_ids, sinks)]
        out, lse = self.attention.forward_op(*meta)
        self.assertEqual((out.shape, out.dtype, lse.shape, lse.dtype),
                         (torch.Size([2, 4, 192, 64]), torch.float16, torch.Size([2, 4, 192]), torch.float32))
        grads = self.attention.backward_op(*meta[:3], out, out, lse, *meta[3:])
        self.assertEqual([tuple(g.shape) for g in grads], [(2, 4, 192, 64), (2, 2, 256, 64), (2, 2, 256, 64), (4,)])
        # A BTNH view in gives BTNH memory out, in the fake as in the real implementation.
        btnh = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in meta[:3]]
        out, _ = self.attention.forward_op(*btnh, *meta[3:])
        self.assertEqual(out.stride(), btnh[0].stride())

    def test_loading_twice_gives_the_same_operators(self):
        self.assertIs(kgen.torch.load(common.folder()), self.attention)
        self.assertIs(torch.ops.kgen.sm90a_launcher_checks_forward.default, self.attention.forward_op._opoverload)

    def test_not_a_kernel_folder(self):
        with self.assertRaisesRegex(kgen.torch.GeneratedFolderError, "no MANIFEST.json"):
            kgen.torch.load(common.SPECS)


if __name__ == "__main__":
    unittest.main()
