"""A folder `kgen gen` wrote (generated/<name>/), as the front doors read it: MANIFEST.json,
the spec's resolved signature (what a caller passes and gets back), and the files of each
kernel. No framework is imported here; kgen.jax (and kgen.torch) build on it."""
from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

from kgen.errors import GeneratedFolderError


@dataclasses.dataclass(frozen=True)
class Shape:
  batch: int
  q_heads: int
  kv_heads: int
  q_len: int
  kv_len: int
  head_dim: int
  head_dim_v: int


@dataclasses.dataclass(frozen=True)
class Signature:
  """MANIFEST.json's "signature": the spec with its defaults resolved (docs/spec-format.md
  §3, §7)."""
  shape: Shape
  dtype: str  # "bfloat16", "float16", "float32"
  scale: float
  softcap: float | None
  mask: Any  # the spec's "mask" value
  segment_ids: bool
  sinks: bool
  lse: bool
  backward: bool


class GeneratedFolder:
  """MANIFEST.json of one spec's folder and the paths it lists."""

  def __init__(self, path: str | pathlib.Path):
    self.path = pathlib.Path(path)
    manifest_path = self.path / "MANIFEST.json"
    if not manifest_path.is_file():
      raise GeneratedFolderError(
          f"{self.path}: no MANIFEST.json, so not a folder `kgen gen` wrote; generate one with "
          "`make gen SPEC=specs/<name>.json` and load generated/<name>")
    manifest = json.loads(manifest_path.read_text())
    self.name: str = manifest["name"]
    self.spec: str = manifest["spec"]  # where the spec was, relative to kgen's root
    self.regenerate: str = manifest["regenerate"]  # "make gen SPEC=specs/<name>.json"
    if "signature" not in manifest:
      raise GeneratedFolderError(
          f"{manifest_path}: written by a kgen without the front doors' signature; "
          f"regenerate it: {self.regenerate}")
    fields = dict(manifest["signature"])
    self.signature = Signature(**{**fields, "shape": Shape(**fields["shape"])})
    self._files: dict[str, dict] = manifest["files"]

  def is_decode(self) -> bool:
    """Whether the folder holds decode kernels ("kind": "attention_decode", docs/decode.md):
    their plan files say "pass": "decode", or a kernel was rendered from a decode template
    (templates/<target or cuda>/decode/: the sm90a decode kernel writes no plan file)."""
    if any("/decode/" in template for entry in self._files.values() for template in entry.get("templates", [])):
      return True
    return any(json.loads((self.path / name).read_text()).get("pass") == "decode"
               for name, _ in self.listed("plan") if (self.path / name).is_file())

  def has(self, target: str, role: str, pass_: str = "") -> bool:
    return self._find(target, role, pass_) is not None

  def file(self, target: str, role: str, pass_: str = "") -> pathlib.Path:
    """The path of the file MANIFEST.json lists for (target, role, pass); raises
    GeneratedFolderError, with the command that writes it, when it is absent."""
    name = self._find(target, role, pass_)
    what = f"the {target} {pass_ + ' ' if pass_ else ''}{role} file"
    if name is None:
      backward = ', with "backward": true' if pass_ else ""
      raise GeneratedFolderError(
          f"{self.path}: MANIFEST.json lists no {what} (does {self.spec} name target "
          f"{target}{backward}?); regenerate: {self.regenerate}")
    path = self.path / name
    if not path.is_file():
      raise GeneratedFolderError(f"{path}: missing ({what}); write it with: {self.regenerate}")
    return path

  def listed(self, role: str) -> list[tuple[str, dict]]:
    """(file name, MANIFEST.json entry) of every file with this role."""
    return [(name, entry) for name, entry in self._files.items() if entry.get("role") == role]

  def _find(self, target: str, role: str, pass_: str) -> str | None:
    for name, entry in self._files.items():
      if (entry.get("target") == target and entry.get("role") == role and
          entry.get("pass", "") == pass_):
        return name
    return None
