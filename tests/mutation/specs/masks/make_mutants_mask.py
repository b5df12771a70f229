"""Writes mutants_explicit_mask.npy, the explicit mask of ../mutants_explicit_mask.json.

256 x 1024 booleans in blocks of 128 x 256 (the spec's tiles): the first block row has a
full block, an empty one and two partial ones (random bits; a band); in the second, rows
200 and 201 have no key at all (so its blocks are partial or empty), so the kernel's full,
empty and partial paths and its rule for fully masked rows all run. Rerun with `python3 make_mutants_mask.py` (numpy); the output is deterministic.
"""
import numpy as np

rng = np.random.default_rng(20261123)
mask = np.zeros((256, 1024), dtype=bool)
rows, cols = np.indices((128, 256))
band = np.abs(2 * rows - cols) < 40
mask[0:128, 0:256] = rng.random((128, 256)) < 0.6
mask[0:128, 256:512] = True
mask[0:128, 768:1024] = band
mask[128:256, 0:256] = band
mask[128:256, 256:512] = rng.random((128, 256)) < 0.3
mask[128:256, 512:768] = True
mask[[200, 201], :] = False
np.save("mutants_explicit_mask.npy", mask)
