"""What a generated folder's sm90a kernels take and return, as kgen.torch needs it.

Read through kgen.generated_folder, as kgen.jax reads it: MANIFEST.json's signature (the spec
with its defaults resolved) gives the shapes, dtype and optional operands; its file list says
which sm90a kernels exist. The shim compiled from the launcher headers reports the same facts
at load, and native.py refuses a library whose headers disagree with the signature.
"""
import dataclasses
import os

import torch

from kgen.errors import GeneratedFolderError
from kgen.generated_folder import GeneratedFolder

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


@dataclasses.dataclass(frozen=True)
class Interface:
    generated: GeneratedFolder = dataclasses.field(compare=False, repr=False)
    name: str
    folder: str  # absolute
    spec: str  # as MANIFEST.json names it
    regenerate: str  # MANIFEST.json's command, e.g. "make gen SPEC=specs/splash.json"
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    head_dim: int
    head_dim_v: int
    dtype: torch.dtype
    lse: bool  # the forward writes lse (always, with a backward)
    segment_ids: bool
    sinks: bool
    backward: bool

    def file(self, suffix):
        return os.path.join(self.folder, f"{self.name}.{suffix}")

    @property
    def sources(self):
        """The generated files the shim compiles or includes."""
        files = ["sm90a.cu", "sm90a.h"] + (["sm90a.backward.cu", "sm90a.backward.h"] if self.backward else [])
        return [self.file(f) for f in files]

    @property
    def forward_namespace(self):
        return f"kgen::{self.name}_sm90a"

    @property
    def backward_namespace(self):
        return f"kgen::{self.name}_sm90a_backward"


def read_interface(folder):
    """The Interface of the sm90a kernels in `folder` (e.g. "generated/splash")."""
    generated = GeneratedFolder(os.path.abspath(folder))
    if generated.is_decode():
        raise GeneratedFolderError(f"{generated.path}: a decode kernel; kgen.torch has no decode front door "
                                   "(docs/decode.md)")
    generated.file("sm90a", "kernel")  # raises, naming the command, when there is none
    backward = generated.has("sm90a", "kernel", "backward")
    if backward:
        generated.file("sm90a", "kernel", "backward")
    signature, shape = generated.signature, generated.signature.shape
    if signature.dtype not in DTYPES:
        raise GeneratedFolderError(f"{generated.path}: dtype {signature.dtype} is not one kgen.torch knows")
    return Interface(
        generated=generated, name=generated.name, folder=str(generated.path), spec=generated.spec,
        regenerate=generated.regenerate, batch=shape.batch, q_heads=shape.q_heads, kv_heads=shape.kv_heads,
        q_len=shape.q_len, kv_len=shape.kv_len, head_dim=shape.head_dim, head_dim_v=shape.head_dim_v,
        dtype=DTYPES[signature.dtype], lse=signature.lse, segment_ids=signature.segment_ids,
        sinks=signature.sinks, backward=backward)
