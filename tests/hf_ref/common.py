"""What every family's reference shares: reading a dump, and the pieces of
transformers' math that are the same in every family (RMSNorm, the rotary
frequencies, causal attention). Everything runs in float64 with numpy only,
shares no code with seam, and reads only Hugging Face names.
"""
import json
import math
import struct

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


def read_weights(d):
    """model.safetensors, or every file a model.safetensors.index.json names."""
    import os

    index = os.path.join(d, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(d, "model.safetensors"))
    out = {}
    for f in sorted(set(json.load(open(index))["weight_map"].values())):
        out.update(read_safetensors(os.path.join(d, f)))
    return out


def rms_norm(x, w, eps):
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def silu(x):
    return x / (1 + np.exp(-x))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def default_inv_freq(dim, theta):
    """transformers' default rope: one inverse frequency per rotary pair."""
    return 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def llama3_inv_freq(dim, theta, s):
    """`_compute_llama3_parameters`: long wavelengths slowed by factor, a smooth band between."""
    inv = default_inv_freq(dim, theta)
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    scaled = np.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, scaled)


def get_mscale(scale, mscale=1.0):
    """YaRN's magnitude correction (`get_mscale` in transformers' rope utils)."""
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_inv_freq(dim, base, factor, original, s):
    """`_compute_yarn_parameters` once factor and the original length are
    known: (inv_freq, attention_factor). `s` holds the optional keys
    (attention_factor, mscale, mscale_all_dim, beta_fast, beta_slow, truncate)."""
    attention_factor = s.get("attention_factor")
    mscale, mscale_all_dim = s.get("mscale"), s.get("mscale_all_dim")
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    beta_fast = s.get("beta_fast") or 32
    beta_slow = s.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if s.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation_factor = 1 - ramp
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_factor) + (1.0 / pos_freqs) * extrapolation_factor
    return inv, float(attention_factor)


def rotate_half(x, cos, sin):
    """x: [tokens, heads, dim]; cos/sin: [tokens, dim/2]. Pairs i with i + dim/2."""
    c = np.concatenate([cos, cos], axis=-1)[:, None, :]
    s = np.concatenate([sin, sin], axis=-1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * c + rotated * s


def causal_attention(q, k, v, scale, window=0, sinks=None):
    """q: [t, heads, d]; k, v: [t, heads, dv] (already repeated for GQA).

    window > 0 keeps a query's last `window` keys (itself included); sinks
    is one extra logit per head that takes probability mass and adds nothing.
    """
    t = q.shape[0]
    i = np.arange(t)
    mask = i[None, :] <= i[:, None]
    if window > 0:
        mask &= i[:, None] - i[None, :] < window
    scores = np.einsum("qhd,khd->hqk", q, k) * scale
    scores = np.where(mask[None], scores, -np.inf)
    if sinks is not None:
        sink = np.broadcast_to(sinks[:, None, None], (scores.shape[0], t, 1))
        scores = np.concatenate([scores, sink], axis=-1)
    probs = softmax(scores)
    if sinks is not None:
        probs = probs[..., :-1]
    return np.einsum("hqk,khd->qhd", probs, v)


def check(d, forward, tolerance):
    """Runs `forward(cfg, weights, ids, positions)` per request of dump `d`
    and compares it with the dumped last_hidden_state; 0 when within."""
    cfg = json.load(open(f"{d}/config.json"))
    w = read_weights(d)
    inputs = read_safetensors(f"{d}/inputs.safetensors")
    dumped = read_safetensors(f"{d}/outputs.safetensors")["last_hidden_state"]
    start, worst = 0, 0.0
    for length in inputs["request_lengths"]:
        ids = inputs["input_ids"][start : start + length]
        positions = inputs["positions"][start : start + length]
        expected = forward(cfg, w, ids, positions)
        worst = max(worst, float(np.max(np.abs(expected - dumped[start : start + length]))))
        start += length
    if start != dumped.shape[0]:
        print(f"the requests cover {start} tokens but last_hidden_state has {dumped.shape[0]}")
        return 1
    print(f"{cfg['model_type']}: {start} tokens, max |seam - transformers math| = {worst:.3g} (tolerance {tolerance:g})")
    logits_ok = check_logits(cfg, w, inputs, read_safetensors(f"{d}/outputs.safetensors"), forward, tolerance)
    return 0 if worst <= tolerance and logits_ok else 1


def lm_head(cfg, w):
    """The LM head's matrix [vocabulary, hidden]: lm_head.weight, or the
    embedding where tie_word_embeddings says so."""
    if "lm_head.weight" in w:
        return w["lm_head.weight"]
    if cfg.get("tie_word_embeddings"):
        for name in ("model.embed_tokens.weight", "backbone.embeddings.weight"):
            if name in w:
                return w[name]
    raise KeyError("the checkpoint has no lm_head.weight and does not tie it to the embedding")


def check_logits(cfg, w, inputs, outputs, forward, tolerance):
    """The dumped logits against the LM head over the reference's hidden
    states, and (a generation) each generated token against the greedy
    choice of those logits: its logit within tolerance of the row's largest."""
    if "logits" not in outputs:
        return True
    head = lm_head(cfg, w)
    start, worst, rows = 0, 0.0, []
    for length in inputs["request_lengths"]:
        ids = inputs["input_ids"][start : start + length]
        positions = inputs["positions"][start : start + length]
        expected = forward(cfg, w, ids, positions) @ head.T
        worst = max(worst, float(np.max(np.abs(expected - outputs["logits"][start : start + length]))))
        rows.append(expected)
        start += length
    ok = worst <= tolerance
    message = f"logits: max |seam - transformers math| = {worst:.3g}"
    if "next_ids" in outputs:
        expected = np.concatenate(rows)
        chosen = outputs["next_ids"]
        picked = chosen >= 0
        margin = expected.max(axis=1)[picked] - expected[picked, chosen[picked]]
        ok = ok and bool(np.all(margin <= tolerance))
        message += f"; {int(picked.sum())} generated tokens, the greedy choice's worst margin {float(margin.max()):.3g}"
    print(message)
    return ok
