"""The errors kgen's front doors raise (docs/python.md, "Errors")."""


class ArgumentError(ValueError):
  """An argument does not fit the spec the kernels were generated for: the message names
  the argument, what was found, what the spec fixed, and how to regenerate."""


class GeneratedFolderError(RuntimeError):
  """A generated folder is missing a file, or its files disagree (regenerate it)."""
