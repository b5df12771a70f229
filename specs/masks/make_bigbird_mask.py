"""Writes bigbird_block_sparse.npy, the explicit mask of specs/bigbird_block_sparse.json.

BigBird's block-sparse pattern (ITC variant, as in google/bigbird-roberta-base:
block_size 64, num_random_blocks 3) over a sequence of blocks 0 .. n - 1:

  * global: the first and the last block attend to every key, and every query
    attends to the first and the last key block;
  * window: every query block attends to its own block and its two neighbours;
  * random: every other query block (1 .. n - 2) also attends to
    RANDOM_BLOCKS key blocks drawn from the middle blocks outside its window.

The mask is bidirectional (BigBird is an encoder). One random draw is shared by
all heads. The draw uses a fixed seed, so running this script again rewrites the
same bytes. Run from anywhere:  .venv/bin/python specs/masks/make_bigbird_mask.py
(`--seq-len N --out FILE` writes the same pattern for another length: the explicit-mask
benchmark, bench/tpu_vs_splash.sh, makes its 4096-token mask so.)
"""
import argparse
import pathlib

import numpy as np

SEQ_LEN = 2048
BLOCK = 64
RANDOM_BLOCKS = 3
SEED = 20240613


def block_pattern(rng, n_blocks):
    """[n_blocks, n_blocks] booleans: which key blocks each query block attends."""
    blocks = np.zeros((n_blocks, n_blocks), dtype=bool)
    last = n_blocks - 1
    blocks[0, :] = True
    blocks[last, :] = True
    blocks[:, 0] = True
    blocks[:, last] = True
    for q in range(n_blocks):
        blocks[q, max(q - 1, 0):min(q + 2, n_blocks)] = True
    for q in range(1, last):
        candidates = [k for k in range(1, last) if abs(k - q) > 1]
        chosen = rng.choice(candidates, size=RANDOM_BLOCKS, replace=False)
        blocks[q, chosen] = True
    return blocks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq-len", type=int, default=SEQ_LEN)
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent / "bigbird_block_sparse.npy")
    args = parser.parse_args()
    assert args.seq_len % BLOCK == 0
    pattern = block_pattern(np.random.default_rng(SEED), args.seq_len // BLOCK)
    mask = np.kron(pattern, np.ones((BLOCK, BLOCK), dtype=bool)).astype(bool)
    assert mask.shape == (args.seq_len, args.seq_len) and mask.dtype == np.bool_
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out, mask)
    print(f"wrote {out.name}: {mask.shape}, {mask.mean():.4f} of positions allowed")


if __name__ == "__main__":
    main()
