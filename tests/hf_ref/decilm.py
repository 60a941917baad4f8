"""Nemotron-NAS (model_type nemotron-nas): the Hub's remote code
modeling_decilm.py (nvidia/Llama-3_3-Nemotron-Super-49B-v1, DeciLMModel).

A Llama whose layers each follow their own block_configs[i]:
  attention: no_op (nothing, and no input_layernorm), replace_with_linear
             (input_layernorm + one hidden x hidden linear_attn), or GQA
             attention with num_key_value_heads = heads / n_heads_in_group;
  ffn:       no_op (nothing, and no post_attention_layernorm),
             replace_with_linear (post_attention_layernorm + linear_mlp), or a
             SwiGLU of width _ffn_mult_to_intermediate_size(ffn_mult, hidden).
head_dim is hidden_size // num_attention_heads; RoPE is rotate-half with the
config's rope_scaling (llama3 in the real checkpoints).
"""
import numpy as np

from common import causal_attention, default_inv_freq, llama3_inv_freq, rms_norm, rotate_half, silu


def _find_multiple(n, k):
    return n if n % k == 0 else n + k - (n % k)


def ffn_mult_to_intermediate_size(ffn_mult, n_embd):
    return _find_multiple(int(2 * ffn_mult * n_embd / 3), 256)


def inv_freq(cfg, hd):
    theta = cfg.get("rope_theta", 10000.0)
    s = cfg.get("rope_scaling")
    kind = "default" if s is None else s.get("rope_type", s.get("type"))
    if kind == "default":
        return default_inv_freq(hd, theta)
    if kind == "linear":
        return default_inv_freq(hd, theta) / s["factor"]
    if kind == "llama3":
        return llama3_inv_freq(hd, theta, s)
    raise ValueError(f"rope_type {kind!r} is not implemented by the reference")


def act(name):
    if name in ("silu", "swish"):
        return silu
    if name == "relu":
        return lambda x: np.maximum(x, 0)
    raise ValueError(f"hidden_act {name!r} is not one the reference knows")


def linear(x, w, p):
    out = x @ w[p + ".weight"].T
    if p + ".bias" in w:
        out = out + w[p + ".bias"]
    return out


def attention(cfg, w, p, a, ac, cos, sin):
    t = a.shape[0]
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    hd = h // heads
    kv = heads // ac["n_heads_in_group"]
    q = linear(a, w, p + "q_proj").reshape(t, heads, hd)
    k = linear(a, w, p + "k_proj").reshape(t, kv, hd)
    v = linear(a, w, p + "v_proj").reshape(t, kv, hd)
    q, k = rotate_half(q, cos, sin), rotate_half(k, cos, sin)
    k = np.repeat(k, heads // kv, axis=1)
    v = np.repeat(v, heads // kv, axis=1)
    if ac.get("num_sink_tokens") is not None or ac.get("unshifted_sink"):
        raise ValueError(f"{p}: sink attention is not implemented by the reference")
    window = ac.get("window_length") or 0  # _gemma2_window_mask keeps i - j < window
    o = causal_attention(q, k, v, 1.0 / np.sqrt(hd), window=window).reshape(t, heads * hd)
    return linear(o, w, p + "o_proj")


def forward(cfg, w, ids, positions):
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    hd = h // heads
    eps = cfg.get("rms_norm_eps", 1e-6)
    f = act(cfg.get("hidden_act", "silu"))
    freqs = positions[:, None].astype(np.float64) * inv_freq(cfg, hd)[None, :]
    cos, sin = np.cos(freqs), np.sin(freqs)
    x = w["model.embed_tokens.weight"][ids]
    blocks = cfg["block_configs"]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        ac, fc = blocks[i].get("attention", {}), blocks[i].get("ffn", {})
        if not ac.get("no_op", False):
            a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
            if ac.get("replace_with_linear", False):
                x = x + linear(a, w, p + "self_attn.linear_attn")
            else:
                x = x + attention(cfg, w, p + "self_attn.", a, ac, cos, sin)
        if not fc.get("no_op", False):
            m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            if fc.get("replace_with_linear", False):
                x = x + linear(m, w, p + "mlp.linear_mlp")
            else:
                width = ffn_mult_to_intermediate_size(fc["ffn_mult"], h)
                gw = w[p + "mlp.gate_proj.weight"]
                if gw.shape[0] != width:
                    raise ValueError(
                        f"{p}mlp.gate_proj.weight is {gw.shape}; DeciLMMLP builds it "
                        f"[_ffn_mult_to_intermediate_size({fc['ffn_mult']}, {h}) = {width}, {h}]"
                    )
                gate = linear(m, w, p + "mlp.gate_proj")
                up = linear(m, w, p + "mlp.up_proj")
                x = x + linear(f(gate) * up, w, p + "mlp.down_proj")
    return rms_norm(x, w["model.norm.weight"], eps)
