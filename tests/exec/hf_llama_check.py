#!/usr/bin/python3
"""Checks a `seam run llama --dump DIR` against Hugging Face Llama's math.

Reads DIR/config.json, DIR/model.safetensors, DIR/inputs.safetensors and
DIR/outputs.safetensors with a plain safetensors reader (json + numpy),
recomputes LlamaModel's last_hidden_state in float64 for every request
(RMSNorm with rms_norm_eps, rotate-half RoPE with rope_theta, grouped-query
attention, SwiGLU, the final norm) and compares it with the dumped one.

Usage: hf_llama_check.py DIR [tolerance]     exit 0 when within tolerance
"""
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin : base + end]
        dtype = info["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, "<f4")
        elif dtype == "BF16":
            arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype == "I64":
            arr = np.frombuffer(raw, "<i8")
        elif dtype == "I32":
            arr = np.frombuffer(raw, "<i4")
        else:
            raise ValueError(f"{path}: unexpected dtype {dtype} for {name}")
        out[name] = arr.reshape(info["shape"]).astype(np.float64 if dtype in ("F32", "BF16") else np.int64)
    return out


def rms_norm(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def rope(x, positions, theta):
    # x: [tokens, heads, head_dim]; the rotate-half form of transformers' Llama.
    hd = x.shape[-1]
    inv_freq = 1.0 / (theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    freqs = positions[:, None].astype(np.float64) * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]
    half = hd // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def llama(cfg, w, ids, positions):
    h = cfg["hidden_size"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // heads
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    x = w["model.embed_tokens.weight"][ids]
    t = len(ids)
    mask = np.tril(np.ones((t, t), dtype=bool))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(t, heads, hd)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(t, kv, hd)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(t, kv, hd)
        q, k = rope(q, positions, theta), rope(k, positions, theta)
        k = np.repeat(k, heads // kv, axis=1)
        v = np.repeat(v, heads // kv, axis=1)
        scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(hd)
        scores = np.where(mask[None], scores, -np.inf)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        o = np.einsum("hqk,khd->qhd", probs, v).reshape(t, heads * hd)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = f @ w[p + "mlp.gate_proj.weight"].T
        up = f @ w[p + "mlp.up_proj.weight"].T
        x = x + ((gate / (1 + np.exp(-gate))) * up) @ w[p + "mlp.down_proj.weight"].T
    return rms_norm(x, w["model.norm.weight"], eps)


def main():
    d = sys.argv[1]
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-4
    cfg = json.load(open(f"{d}/config.json"))
    assert cfg["model_type"] == "llama", cfg["model_type"]
    w = read_safetensors(f"{d}/model.safetensors")
    inputs = read_safetensors(f"{d}/inputs.safetensors")
    dumped = read_safetensors(f"{d}/outputs.safetensors")["last_hidden_state"]
    start, worst = 0, 0.0
    for length in inputs["request_lengths"]:
        ids = inputs["input_ids"][start : start + length]
        positions = inputs["positions"][start : start + length]
        expected = llama(cfg, w, ids, positions)
        worst = max(worst, float(np.max(np.abs(expected - dumped[start : start + length]))))
        start += length
    print(f"{start} tokens, max |seam - transformers math| = {worst:.3g} (tolerance {tolerance:g})")
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
