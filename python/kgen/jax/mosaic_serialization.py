"""The one place kgen reaches past JAX's public API: serializing a Mosaic module.

A `tpu_custom_call` carries its Mosaic kernel in the backend config as MLIR bytecode of
the module after Mosaic's `mosaic-serde` pass (ops renamed to `stable_mosaic.*` and a
version attribute added). JAX builds that payload in `jax._src.tpu_custom_call`, behind
`jax.experimental.mosaic.as_tpu_kernel`, and offers no public function that returns it.
kgen builds the same bytes here, once, at `make gen` time (`python -m
kgen.jax.write_custom_calls`), so that calling a kernel needs only the public
`jax.ffi.ffi_call` with the written string. Nothing at call time imports this module.

What it uses, and their stability tier (jax's docs/api_compatibility.md):
- `jax.interpreters.mlir.make_ir_context` (legacy internal): a context with the dialects
  kgen's text uses (a bare `ir.Context()` rejects `func`);
- `jax.experimental.mosaic.dialects.tpu` (experimental): registers Mosaic's TPU dialect,
  whose registration also brings the `mosaic-serde` pass;
- `jax.extend.mlir.ir` and `.passmanager` (semi-public): parse, run the pass, write bytecode.

`tests/python/custom_call_test.py` holds the result to what JAX itself puts in an
exported `tpu_custom_call` for the same `.mlir`, byte for byte, so a jax upgrade that
changes any of this fails there rather than on a TPU.
"""
from __future__ import annotations

import base64
import io

# Mosaic's serialization version that every TPU runtime of the pinned jax reads: jax uses
# it (`_FWD_COMPAT_VERSION` in jax/_src/tpu_custom_call.py, 11 at jax 0.10.2) whenever it
# exports or has no TPU attached; newer runtimes upgrade older bodies when they load them.
TARGET_VERSION = 11


def serialized_body(module_text: str) -> bytes:
  """The module as Mosaic's serde pass and MLIR's bytecode writer leave it."""
  from jax.experimental.mosaic.dialects import tpu  # pylint: disable=import-outside-toplevel
  from jax.extend.mlir import ir, passmanager  # pylint: disable=import-outside-toplevel
  from jax.interpreters import mlir  # pylint: disable=import-outside-toplevel

  context = mlir.make_ir_context()
  tpu.register_dialect(context)
  with context, ir.Location.unknown():
    module = ir.Module.parse(module_text)
    # The serialized ops belong to no registered dialect.
    context.allow_unregistered_dialects = True
    passmanager.PassManager.parse(
        f"builtin.module(mosaic-serde{{serialize=true target-version={TARGET_VERSION}}})"
    ).run(module.operation)
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer, desired_version=0)
  return buffer.getvalue()


def backend_config(module_text: str) -> str:
  """The `tpu_custom_call` backend config JAX writes for this module with as_tpu_kernel's
  defaults (serialization format 1, layout passes on, no cost estimate, no VMEM limit)."""
  body = base64.b64encode(serialized_body(module_text)).decode("ascii")
  return ('{"custom_call_config": {"body": "' + body + '", "serialization_format": 1, '
          '"needs_layout_passes": true, "shape_invariant_numerics": false}}')
