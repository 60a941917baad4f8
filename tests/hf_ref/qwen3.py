"""transformers' Qwen3Model (modeling_qwen3.py): Llama's block with an RMSNorm
over each head's query and key (q_norm/k_norm, weight [head_dim], applied
after the projection and before RoPE), rotate-half RoPE, SwiGLU, final norm.

Also the pieces qwen3_moe.py and gpt_oss.py share with it: reading the rope
configuration the way transformers' config classes do, the rope types they
can name (default, linear, llama3, yarn), the attention of one layer and the
dense MLP.
"""

import numpy as np

from common import causal_attention, default_inv_freq, llama3_inv_freq, rms_norm, rotate_half, silu, yarn_inv_freq as common_yarn


# ----------------------------------------------------------------------------
# Rotary embedding, as modeling_rope_utils computes it.


def rope_parameters(cfg, family_default=None):
    """The rope dict transformers ends up with: `rope_parameters` (v5), else a
    non-null legacy `rope_scaling` (v4; "type" is the old spelling of
    "rope_type"), else the family's default when the key is absent (an explicit
    `"rope_scaling": null` means plain RoPE, as the v4 config classes take it)."""
    if cfg.get("rope_parameters"):
        p = dict(cfg["rope_parameters"])
    elif cfg.get("rope_scaling"):
        p = dict(cfg["rope_scaling"])
    elif "rope_scaling" in cfg or family_default is None:
        p = {"rope_type": "default"}
    else:
        p = dict(family_default)
    if "rope_type" not in p:
        p["rope_type"] = p.pop("type", "default")
    p.setdefault("rope_theta", cfg.get("rope_theta", 10000.0))
    return p


def yarn_inv_freq(dim, p, max_position_embeddings):
    """`_compute_yarn_parameters`: (inv_freq, attention_factor); a missing
    factor is max_position_embeddings over the original length."""
    old = p["original_max_position_embeddings"]
    factor = p.get("factor")
    if factor is None:
        factor = max_position_embeddings / old
    return common_yarn(dim, p["rope_theta"], factor, old, p)


def rope_cos_sin(cfg, dim, positions, family_default=None):
    """cos, sin [tokens, dim/2] (attention_scaling folded in) for rotate-half RoPE."""
    p = rope_parameters(cfg, family_default)
    kind = p["rope_type"]
    scale = 1.0
    if kind == "default":
        inv = default_inv_freq(dim, p["rope_theta"])
    elif kind == "linear":
        inv = default_inv_freq(dim, p["rope_theta"]) / p["factor"]
    elif kind == "llama3":
        inv = llama3_inv_freq(dim, p["rope_theta"], p)
    elif kind == "yarn":
        inv, scale = yarn_inv_freq(dim, p, cfg.get("max_position_embeddings", 4096))
    else:
        raise ValueError(f"rope_type {kind} is not implemented by this reference")
    freqs = positions[:, None].astype(np.float64) * inv[None, :]
    return np.cos(freqs) * scale, np.sin(freqs) * scale


# ----------------------------------------------------------------------------
# Pieces of a decoder layer.


def linear(x, w, name, bias=False):
    """nn.Linear: x @ W^T (+ `name.bias` when the module is built with a bias)."""
    y = x @ w[name + ".weight"].T
    if bias:
        y = y + w[name + ".bias"]
    return y


def attention(x, w, p, cfg, hd, cos, sin, qk_norm, window=0, sinks=None, bias=None):
    """One self-attention block (input already normed): projections (biased when
    config.attention_bias), optional per-head q/k RMSNorm, rotate-half RoPE,
    causal GQA softmax(q k^T / sqrt(hd)) with optional sinks, o_proj."""
    t = x.shape[0]
    if bias is None:
        bias = cfg.get("attention_bias", False)
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    eps = cfg.get("rms_norm_eps", 1e-6)
    q = linear(x, w, p + "self_attn.q_proj", bias).reshape(t, heads, hd)
    k = linear(x, w, p + "self_attn.k_proj", bias).reshape(t, kv, hd)
    v = linear(x, w, p + "self_attn.v_proj", bias).reshape(t, kv, hd)
    if qk_norm:
        q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
        k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
    q, k = rotate_half(q, cos, sin), rotate_half(k, cos, sin)
    # repeat_kv: query head h reads key/value head h // (heads / kv)
    k = np.repeat(k, heads // kv, axis=1)
    v = np.repeat(v, heads // kv, axis=1)
    o = causal_attention(q, k, v, hd**-0.5, window=window, sinks=sinks).reshape(t, heads * hd)
    return linear(o, w, p + "self_attn.o_proj", bias)


def dense_mlp(x, w, p):
    """Qwen3MLP / Qwen3MoeMLP: down(silu(gate(x)) * up(x))."""
    gate = x @ w[p + "gate_proj.weight"].T
    up = x @ w[p + "up_proj.weight"].T
    return (silu(gate) * up) @ w[p + "down_proj.weight"].T


def check_act(cfg):
    act = cfg.get("hidden_act", "silu")
    if act not in ("silu", "swish"):
        raise ValueError(f"hidden_act {act} is not implemented by this reference")


def qwen3_head_dim(cfg):
    """Qwen3Config: head_dim defaults to 128 when the key is absent (not hidden/heads);
    an explicit null falls back to hidden_size // num_attention_heads."""
    if "head_dim" in cfg:
        return cfg["head_dim"] or cfg["hidden_size"] // cfg["num_attention_heads"]
    return 128


def qwen3_windows(cfg):
    """Per-layer sliding window (0 = full): Qwen3Config keeps sliding_window only with
    use_sliding_window, and layer_types defaults to sliding from max_window_layers on."""
    n = cfg["num_hidden_layers"]
    window = cfg.get("sliding_window", 4096) if cfg.get("use_sliding_window", False) else None
    types = cfg.get("layer_types")
    if types is None:
        mwl = cfg.get("max_window_layers", 28)
        types = ["sliding_attention" if window is not None and i >= mwl else "full_attention" for i in range(n)]
    return [window if (t == "sliding_attention" and window) else 0 for t in types]


def forward(cfg, w, ids, positions):
    check_act(cfg)
    hd = qwen3_head_dim(cfg)
    eps = cfg.get("rms_norm_eps", 1e-6)
    windows = qwen3_windows(cfg)
    cos, sin = rope_cos_sin(cfg, hd, positions)
    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        x = x + attention(a, w, p, cfg, hd, cos, sin, qk_norm=True, window=windows[i])
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + dense_mlp(f, w, p + "mlp.")
    return rms_norm(x, w["model.norm.weight"], eps)
