"""The tpu_custom_call payloads `make gen` writes (python -m kgen.jax.write_custom_calls):

- each checked-in <kernel>.custom_call.json carries, byte for byte, the backend config JAX
  itself puts into an exported tpu_custom_call when it wraps the same .mlir with
  jax.experimental.mosaic.as_tpu_kernel (tests/mosaic_dialect/check_real_mosaic.py's
  export), so kgen's serialization (kgen.jax.mosaic_serialization) is JAX's;
- `write_custom_calls --check` fails, naming the file and the fix, on a planted stale or
  missing payload, and passes on a fresh copy.

    python custom_call_test.py   (from the repository root)
"""
import contextlib
import io
import json
import pathlib
import shutil
import sys
import tempfile
import unittest

import jaxlib
from jax.extend.mlir import ir
from jax.interpreters import mlir

from kgen.jax import write_custom_calls

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/mosaic_dialect"))
import check_real_mosaic  # noqa: E402  pylint: disable=wrong-import-position


def payload_jax_builds(kernel: pathlib.Path) -> str:
  """The backend_config of the tpu_custom_call in jax.export of as_tpu_kernel(kernel)."""
  operands = check_real_mosaic.load_operands(str(kernel).removesuffix(".mlir") + ".operands.json")
  with check_real_mosaic.make_context(), ir.Location.unknown():
    module = ir.Module.parse(kernel.read_text())
    exported = check_real_mosaic.export_kernel(module, operands, operands.kernel)
  configs = []
  with mlir.make_ir_context(), ir.Location.unknown():
    hlo = ir.Module.parse(exported.mlir_module())

    def visit(op):
      if op.name == "stablehlo.custom_call":
        configs.append(ir.StringAttr(op.attributes["backend_config"]).value)
      return ir.WalkResult.ADVANCE

    hlo.operation.walk(visit)
  assert len(configs) == 1, configs
  return configs[0]


def check(specs, out) -> tuple[int, str]:
  errors = io.StringIO()
  with contextlib.redirect_stderr(errors):
    status = write_custom_calls.main(["--check", "--out", str(out), *map(str, specs)])
  return status, errors.getvalue()


class CustomCallPayloads(unittest.TestCase):

  def test_every_written_payload_is_what_jax_builds(self):
    files = sorted((ROOT / "generated").glob("*/*.tpu*.custom_call.json"))
    self.assertEqual(len(files), len(list((ROOT / "generated").glob("*/*.tpu*.mlir"))))
    for path in files:
      with self.subTest(path.name):
        written = json.loads(path.read_text())
        kernel = path.parent / written["kernel"]
        self.assertEqual(written["backend_config"], payload_jax_builds(kernel))
        self.assertEqual(written["jaxlib"], jaxlib.__version__)

  def test_check_catches_stale_and_missing_payloads(self):
    spec = ROOT / "specs/gpt_oss_sinks_sliding_window.json"
    with tempfile.TemporaryDirectory() as temporary:
      out = pathlib.Path(temporary)
      folder = out / "gpt_oss_sinks_sliding_window"
      shutil.copytree(ROOT / "generated/gpt_oss_sinks_sliding_window", folder)
      self.assertEqual(check([spec], out), (0, ""))
      # The kernel changed after its payload was written: a one-byte edit of the module.
      kernel = folder / "gpt_oss_sinks_sliding_window.tpu.dkv.mlir"
      kernel.write_text(kernel.read_text().replace("arith.mulf", "arith.addf", 1))
      status, errors = check([spec], out)
      self.assertEqual(status, 1)
      self.assertIn("gpt_oss_sinks_sliding_window.tpu.dkv.custom_call.json: stale (fix: make gen "
                    "SPEC=specs/gpt_oss_sinks_sliding_window.json)", errors)
      (folder / "gpt_oss_sinks_sliding_window.tpu.custom_call.json").unlink()
      status, errors = check([spec], out)
      self.assertIn("gpt_oss_sinks_sliding_window.tpu.custom_call.json: missing", errors)
      self.assertIn("2 custom_call file(s) are stale", errors)


if __name__ == "__main__":
  unittest.main()
