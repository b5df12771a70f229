"""kgen's front doors: the kernels kgen generates, called from Python frameworks.

`kgen.torch` (PyTorch) is a subpackage; importing `kgen` alone imports no framework, so each
front door needs only its own framework installed (docs/front-doors.md).
"""
