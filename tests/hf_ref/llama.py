"""transformers' LlamaModel (modeling_llama.py): RMSNorm, rotate-half RoPE
(default or llama3 scaling), grouped-query attention, SwiGLU, final norm."""
import numpy as np

from common import causal_attention, default_inv_freq, llama3_inv_freq, rms_norm, rotate_half, silu


def inv_freq(cfg, hd):
    s = cfg.get("rope_scaling")
    if s is None:
        return default_inv_freq(hd, cfg["rope_theta"])
    kind = s.get("rope_type", s.get("type"))
    if kind != "llama3":
        raise ValueError(f"rope_type {kind} is not Llama's")
    return llama3_inv_freq(hd, cfg["rope_theta"], s)


def forward(cfg, w, ids, positions):
    h = cfg["hidden_size"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or h // heads
    eps = cfg["rms_norm_eps"]
    freqs = positions[:, None].astype(np.float64) * inv_freq(cfg, hd)[None, :]
    cos, sin = np.cos(freqs), np.sin(freqs)
    x = w["model.embed_tokens.weight"][ids]
    t = len(ids)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (a @ w[p + "self_attn.q_proj.weight"].T).reshape(t, heads, hd)
        k = (a @ w[p + "self_attn.k_proj.weight"].T).reshape(t, kv, hd)
        v = (a @ w[p + "self_attn.v_proj.weight"].T).reshape(t, kv, hd)
        q, k = rotate_half(q, cos, sin), rotate_half(k, cos, sin)
        k = np.repeat(k, heads // kv, axis=1)
        v = np.repeat(v, heads // kv, axis=1)
        o = causal_attention(q, k, v, hd**-0.5).reshape(t, heads * hd)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = f @ w[p + "mlp.gate_proj.weight"].T
        up = f @ w[p + "mlp.up_proj.weight"].T
        x = x + (silu(gate) * up) @ w[p + "mlp.down_proj.weight"].T
    return rms_norm(x, w["model.norm.weight"], eps)
