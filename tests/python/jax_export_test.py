"""kgen.jax's TPU path, exported on this CPU-only machine: for every checked-in spec with a
tpu target, `jax.export(..., platforms=["tpu"])` of the forward (and, for a backward spec, of
jax.grad of a loss) holds one tpu_custom_call per kernel run (forward; forward, dq, dkv), each
carrying exactly the backend config `make gen` wrote beside the kernel, and no call of the
CPU executor; a decode spec's call holds its kernel and, split, its combine. `make verify`
compiles these exports with libtpu (jax_tpu_compile.py), and the decode specs' shard_map
over a v5e 2x2 slice (verify/decode_across_devices_compile.py).

    python jax_export_test.py   (from the repository root)
"""
import json
import pathlib
import unittest

import jax
import jax.numpy as jnp
from jax.extend.mlir import ir
from jax.interpreters import mlir

import kgen.jax
from kgen.generated_folder import GeneratedFolder
from kgen.jax import cpu_executor

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tpu_folders(decode=False):
  """The checked-in folders with a tpu kernel: the forward specs', or the decode specs'."""
  return sorted(folder for folder in (ROOT / "generated").iterdir()
                if GeneratedFolder(folder).has("tpu", "kernel") and
                GeneratedFolder(folder).is_decode() == decode)


def decode_arguments(decode, devices=1):
  """ShapeDtypeStructs of a decode call's (q, k, v, kv_lens, page_table, sinks) (BNTH), for a
  cache of `devices` shards laid out as kgen.jax.decode_across_devices.sharded takes it."""
  s, dtype = decode.signature.shape, jnp.dtype(decode.signature.dtype)
  axis = 1 if decode.paged else 2  # pools side by side, or positions

  def cache(name):
    shape = list(decode.cache_shapes[name])
    shape[axis] *= devices
    return jax.ShapeDtypeStruct(tuple(shape), dtype)

  table = None
  if decode.paged:
    rows, columns = decode.page_table_shape
    table = jax.ShapeDtypeStruct((rows, columns * devices), jnp.int32)
  sinks = jax.ShapeDtypeStruct((s.q_heads,), jnp.float32) if decode.signature.sinks else None
  return (jax.ShapeDtypeStruct((s.batch, s.q_heads, s.q_len, s.head_dim), dtype), cache("k"),
          cache("v"), jax.ShapeDtypeStruct((s.batch,), jnp.int32), table, sinks)


def arguments(signature):
  """ShapeDtypeStructs of every argument the spec takes (BNTH)."""
  s, dtype = signature.shape, jnp.dtype(signature.dtype)
  args = [jax.ShapeDtypeStruct((s.batch, s.q_heads, s.q_len, s.head_dim), dtype),
          jax.ShapeDtypeStruct((s.batch, s.kv_heads, s.kv_len, s.head_dim), dtype),
          jax.ShapeDtypeStruct((s.batch, s.kv_heads, s.kv_len, s.head_dim_v), dtype)]
  kwargs = {}
  if signature.segment_ids:
    kwargs["segment_ids"] = (jax.ShapeDtypeStruct((s.batch, s.q_len), jnp.int32),
                             jax.ShapeDtypeStruct((s.batch, s.kv_len), jnp.int32))
  if signature.sinks:
    kwargs["sinks"] = jax.ShapeDtypeStruct((s.q_heads,), jnp.float32)
  return args, kwargs


def exported_functions(attention):
  """(what, function of (tensors, extras), Mosaic kernels it runs) for the forward and, with a
  backward, the gradient of a loss with respect to q, k and v."""
  def forward(tensors, extras):
    return attention(*tensors, **extras)

  def loss(tensors, extras):
    return jnp.sum(attention(*tensors, **extras).astype(jnp.float32))

  functions = [("forward", forward, 1)]
  if attention.signature.backward:
    functions.append(("grad", jax.grad(loss), 3))
  return functions


def custom_calls(exported):
  """call_target_name and backend_config of every stablehlo.custom_call in the export."""
  calls = []
  with mlir.make_ir_context(), ir.Location.unknown():
    module = ir.Module.parse(exported.mlir_module())

    def visit(op):
      if op.name == "stablehlo.custom_call":
        config = op.attributes["backend_config"] if "backend_config" in op.attributes else None
        calls.append((ir.StringAttr(op.attributes["call_target_name"]).value,
                      None if config is None else ir.StringAttr(config).value))
      return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
  return calls


class TpuExport(unittest.TestCase):

  def test_every_tpu_spec_exports_its_kernels_with_the_written_payloads(self):
    folders = tpu_folders()
    self.assertGreaterEqual(len(folders), 10)
    for folder in folders:
      attention = kgen.jax.load(folder)
      written = {json.loads(path.read_text())["backend_config"]
                 for path in folder.glob("*.tpu*.custom_call.json")}
      args, kwargs = arguments(attention.signature)
      for what, function, kernels in exported_functions(attention):
        with self.subTest(spec=folder.name, function=what):
          exported = jax.export.export(jax.jit(function), platforms=["tpu"])(args, kwargs)
          calls = custom_calls(exported)
          mosaic = [config for target, config in calls if target == "tpu_custom_call"]
          self.assertEqual(len(mosaic), kernels)
          self.assertTrue(set(mosaic) <= written)
          self.assertNotIn(cpu_executor.TARGET, [target for target, _ in calls])

  def test_every_decode_spec_exports_its_kernel_and_combine(self):
    folders = tpu_folders(decode=True)
    self.assertGreaterEqual(len(folders), 4)
    for folder in folders:
      with self.subTest(spec=folder.name):
        decode = kgen.jax.load(folder)
        written = {json.loads(path.read_text())["backend_config"]
                   for path in folder.glob("*.tpu*.custom_call.json")}

        def call(q, k, v, kv_lens, page_table, sinks, decode=decode):
          return decode(q, k, v, kv_lens, page_table=page_table, sinks=sinks)

        exported = jax.export.export(jax.jit(call), platforms=["tpu"])(*decode_arguments(decode))
        calls = custom_calls(exported)
        mosaic = [config for target, config in calls if target == "tpu_custom_call"]
        self.assertEqual(len(mosaic), 2 if decode.split else 1)
        self.assertEqual(set(mosaic), written)
        self.assertNotIn(cpu_executor.TARGET, [target for target, _ in calls])

  def test_grad_of_splash_holds_forward_dq_and_dkv(self):
    attention = kgen.jax.load(ROOT / "generated/splash")
    args, kwargs = arguments(attention.signature)
    grad = dict((what, f) for what, f, _ in exported_functions(attention))["grad"]
    exported = jax.export.export(jax.jit(grad), platforms=["tpu"])(args, kwargs)
    mosaic = [config for target, config in custom_calls(exported) if target == "tpu_custom_call"]
    self.assertEqual(exported.platforms, ("tpu",))
    bodies = {name: json.loads((ROOT / "generated/splash" / name).read_text())["backend_config"]
              for name in ("splash.tpu.custom_call.json", "splash.tpu.dq.custom_call.json",
                           "splash.tpu.dkv.custom_call.json")}
    self.assertEqual(sorted(mosaic), sorted(bodies.values()))


if __name__ == "__main__":
  unittest.main()
