"""Front doors to the kernels kgen generates (docs/python.md).

    import kgen.jax
    attention = kgen.jax.load("generated/splash")

    import kgen.torch
    attention = kgen.torch.load("generated/splash")

Each framework has its own subpackage (`kgen.jax`, `kgen.torch`) and imports only its
framework, so each front door needs only its own framework installed. What they share has no
framework in it: reading a generated folder (`kgen.generated_folder`) and checking arguments
against its spec (`kgen.arguments`, whose errors are `kgen.ArgumentError`).
"""
from kgen.errors import ArgumentError, GeneratedFolderError

__all__ = ["ArgumentError", "GeneratedFolderError"]
