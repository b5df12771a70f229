"""Writes the tpu_custom_call backend config of every tpu kernel of the given specs, beside
the kernel as `<kernel>.custom_call.json` (MANIFEST.json lists them). `kgen gen` runs it once
it has written the spec's folder, and `kgen gen --check` with `--check`, which compares
instead of writing and exits 1 naming each stale file and the fix.

    python -m kgen.jax.write_custom_calls [--out generated] [--check] SPEC...

The payload is what JAX's own tpu_custom_call carries for the `.mlir` (mosaic_serialization
says how and why here); it depends only on the module text and the pinned jaxlib, so the
file is byte-identical on every machine with that pin (both are recorded in it).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys

from kgen.generated_folder import GeneratedFolder
from kgen.jax import mosaic_serialization

WRITER = "python -m kgen.jax.write_custom_calls (kgen gen)"


def custom_call_file(folder: GeneratedFolder, kernel: pathlib.Path) -> str:
  """The text of one kernel's custom_call.json."""
  import jaxlib  # pylint: disable=import-outside-toplevel
  text = kernel.read_text()
  content = {
      "backend_config": mosaic_serialization.backend_config(text),
      "call_target": "tpu_custom_call",
      "jaxlib": jaxlib.__version__,
      "kernel": kernel.name,
      "kernel_sha256": hashlib.sha256(text.encode()).hexdigest(),
      "mosaic_serialization_version": mosaic_serialization.TARGET_VERSION,
      "provenance": {"generated_by": WRITER, "regenerate": folder.regenerate,
                     "spec": folder.spec},
  }
  return json.dumps(content, indent=2, sort_keys=True) + "\n"


def companions(folder: GeneratedFolder) -> list[tuple[pathlib.Path, pathlib.Path]]:
  """(kernel .mlir, custom_call.json) of every custom_call file MANIFEST.json declares."""
  pairs = []
  for name, entry in folder.listed("custom_call"):
    kernel = folder.file(entry["target"], "kernel", entry.get("pass", ""))
    pairs.append((kernel, folder.path / name))
  return pairs


def spec_name(spec: str) -> str:
  return json.loads(pathlib.Path(spec).read_text())["name"]


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("specs", nargs="+", metavar="SPEC")
  parser.add_argument("--out", default="generated", help="kgen gen's --out (default generated)")
  parser.add_argument("--check", action="store_true", help="compare, write nothing")
  args = parser.parse_args(argv)
  stale = []
  written = unchanged = 0
  for spec in args.specs:
    folder = GeneratedFolder(pathlib.Path(args.out) / spec_name(spec))
    for kernel, path in companions(folder):
      content = custom_call_file(folder, kernel)
      existing = path.read_text() if path.is_file() else None
      if existing == content:
        unchanged += 1
      elif args.check:
        stale.append(f"{path}: {'missing' if existing is None else 'stale'} (fix: "
                     f"{folder.regenerate})")
      else:
        path.write_text(content)
        written += 1
        print(f"wrote {path}")
  if stale:
    print("\n".join(stale), file=sys.stderr)
    print(f"kgen.jax.write_custom_calls: {len(stale)} custom_call file(s) are stale; regenerate "
          "with make gen and commit the result", file=sys.stderr)
    return 1
  if not args.check:
    print(f"{unchanged} custom_call file(s) unchanged")
  return 0


if __name__ == "__main__":
  sys.exit(main())
