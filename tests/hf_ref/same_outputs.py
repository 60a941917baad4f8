#!/usr/bin/python3
"""Exit 0 when two dumps hold bit-identical last_hidden_state and weights.

Usage: same_outputs.py DIR_A DIR_B
"""
import sys

import numpy as np

from common import read_safetensors, read_weights


def main():
    a, b = sys.argv[1], sys.argv[2]
    ha = read_safetensors(f"{a}/outputs.safetensors")["last_hidden_state"]
    hb = read_safetensors(f"{b}/outputs.safetensors")["last_hidden_state"]
    if not np.array_equal(ha, hb):
        print(f"last_hidden_state differs: max |diff| {np.max(np.abs(ha - hb)):.3g}")
        return 1
    wa, wb = read_weights(a), read_weights(b)
    if wa.keys() != wb.keys() or any(not np.array_equal(wa[k], wb[k]) for k in wa):
        print("the checkpoints differ")
        return 1
    print(f"{b} reproduces {a} bit for bit ({ha.shape[0]} tokens, {len(wa)} tensors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
