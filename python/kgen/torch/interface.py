"""What a generated folder's sm90a kernels take and return, read from its files.

The launcher headers (`<name>.sm90a.h`, `<name>.sm90a.backward.h`, docs/sm90a-kernel.md "The
launcher API") are the contract: the shapes are their `inline constexpr` constants, and an
optional operand (lse, segment ids, sinks, dsinks) exists exactly when its `Arguments` field
does. MANIFEST.json says which spec the folder came from and how to regenerate it. The shim
built from the same headers reports the same facts, and native.py checks that they agree.
"""
import dataclasses
import json
import os
import re

import torch

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
SHAPE_CONSTANTS = ("kBatch", "kQHeads", "kKvHeads", "kQLen", "kKvLen", "kHeadDim", "kHeadDimV")
OPTIONAL_OPERANDS = ("lse", "q_segment_ids", "kv_segment_ids", "sinks", "dsinks")


class KernelFolderError(ValueError):
    """A folder that holds no usable sm90a kernel."""


@dataclasses.dataclass(frozen=True)
class Interface:
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
    workspace_bytes: int  # the backward's, 0 without one

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


def _constants(text, path):
    values = {}
    for name in SHAPE_CONSTANTS:
        m = re.search(r"inline constexpr int " + name + r" = (\d+);", text)
        if not m:
            raise KernelFolderError(f"{path}: no `inline constexpr int {name}`: not a kgen sm90a launcher header")
        values[name] = int(m.group(1))
    m = re.search(r'inline constexpr const char\* kDType = "(\w+)";', text)
    if not m or m.group(1) not in DTYPES:
        raise KernelFolderError(f"{path}: no known kDType")
    values["kDType"] = m.group(1)
    return values


def _operands(text):
    return {name for name in OPTIONAL_OPERANDS if re.search(r"\b" + name + r" = nullptr;", text)}


def read_interface(folder):
    """The Interface of the sm90a kernels in `folder` (e.g. "generated/splash")."""
    folder = os.path.abspath(folder)
    manifest_path = os.path.join(folder, "MANIFEST.json")
    if not os.path.isfile(manifest_path):
        raise KernelFolderError(f"{folder}: no MANIFEST.json; a kernel folder is what `make gen` writes "
                                f"(generated/<name>/)")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    name, files = manifest["name"], manifest["files"]
    regenerate = manifest.get("regenerate", f"make gen SPEC={manifest.get('spec', '<spec>')}")
    kernel = files.get(f"{name}.sm90a.cu")
    if kernel is None:
        raise KernelFolderError(f"{folder}: {manifest.get('spec')} generates no sm90a kernel: add \"sm90a\" to "
                                f"its \"targets\" and run `{regenerate}`")
    if kernel.get("status") != "generated":
        raise KernelFolderError(f"{folder}: {name}.sm90a.cu is a {kernel.get('status')}, not a kernel")
    header_path = os.path.join(folder, f"{name}.sm90a.h")
    with open(header_path, encoding="utf-8") as f:
        header = f.read()
    constants = _constants(header, header_path)
    operands = _operands(header)
    backward = f"{name}.sm90a.backward.cu" in files
    workspace = 0
    if backward:
        backward_path = os.path.join(folder, f"{name}.sm90a.backward.h")
        with open(backward_path, encoding="utf-8") as f:
            backward_header = f.read()
        if _constants(backward_header, backward_path) != constants:
            raise KernelFolderError(f"{folder}: the forward and backward launchers disagree on the shapes")
        m = re.search(r"kWorkspaceBytes = (\d+);", backward_header)
        if not m:
            raise KernelFolderError(f"{backward_path}: no kWorkspaceBytes")
        workspace = int(m.group(1))
        if "lse" not in operands:
            raise KernelFolderError(f"{folder}: a backward without the forward's lse")
    return Interface(
        name=name, folder=folder, spec=manifest.get("spec", "?"), regenerate=regenerate,
        batch=constants["kBatch"], q_heads=constants["kQHeads"], kv_heads=constants["kKvHeads"],
        q_len=constants["kQLen"], kv_len=constants["kKvLen"], head_dim=constants["kHeadDim"],
        head_dim_v=constants["kHeadDimV"], dtype=DTYPES[constants["kDType"]],
        lse="lse" in operands, segment_ids="q_segment_ids" in operands, sinks="sinks" in operands,
        backward=backward, workspace_bytes=workspace)
