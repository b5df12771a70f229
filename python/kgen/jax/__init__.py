"""kgen's generated kernels as JAX functions with gradients (docs/python.md).

    import kgen.jax
    attention = kgen.jax.load("generated/splash")
    out = attention(q, k, v)                  # [batch, q_heads, q_len, head_dim_v]
    dq, dk, dv = jax.grad(loss, argnums=(0, 1, 2))(q, k, v)
    decode = kgen.jax.load("generated/llama3_8b_decode")   # a decode spec: kgen.jax.Decode
    out = decode(q, k_pages, v_pages, kv_lens, page_table=page_table)

On a TPU the forward, dq and dkv kernels run as `tpu_custom_call`s; on the CPU the same
MLIR runs on kgen's executor through an XLA FFI handler. Only public JAX is used at call
time (`jax.ffi`, `jax.lax.platform_dependent`, `jax.custom_vjp`); the one workaround,
serializing Mosaic modules at `make gen` time, is isolated in `mosaic_serialization`.
"""
from kgen.jax.attention import Attention, load
from kgen.jax.decode import Decode

__all__ = ["Attention", "Decode", "load"]
