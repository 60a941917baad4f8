#!/usr/bin/python3
"""Checks a `seam run ... --dump DIR` against transformers' math for its family.

Reads DIR/config.json and the Hugging Face checkpoint beside it, recomputes
the model's last_hidden_state in float64 for every request of
DIR/inputs.safetensors with the family's reference (one module per
model_type, written from transformers' modeling code, sharing nothing with
seam) and compares it with DIR/outputs.safetensors.

Usage: check.py DIR [tolerance]     exit 0 when within tolerance (default 1e-4)
"""
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import check  # noqa: E402

# model_type -> the module whose forward(cfg, weights, ids, positions) computes it.
FAMILIES = {
    "llama": "llama",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "gpt_oss": "gpt_oss",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "kimi_k2": "deepseek",
    "nemotron_h": "nemotron_h",
    "qwen3_next": "qwen3_next",
    "nemotron-nas": "decilm",
}


def main():
    d = sys.argv[1]
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
    model_type = json.load(open(f"{d}/config.json"))["model_type"]
    if model_type not in FAMILIES:
        print(f"no reference for model_type {model_type!r}; known: {', '.join(FAMILIES)}")
        return 2
    return check(d, importlib.import_module(FAMILIES[model_type]).forward, tolerance)


if __name__ == "__main__":
    sys.exit(main())
