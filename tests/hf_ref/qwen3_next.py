"""transformers' Qwen3NextModel (modeling_qwen3_next.py / configuration_qwen3_next.py).

Layers follow `config.layer_types` (absent: every `full_attention_interval`-th
layer, default 4, is full attention, the others linear attention). Each layer:
zero-centred RMSNorm (x_normed * (1 + w)) before the mixer and before the MLP.

* Linear attention, Qwen3NextGatedDeltaNet (the torch path, no fla kernels):
  in_proj_qkvz / in_proj_ba grouped per key head (fix_query_key_value_ordering),
  causal depthwise conv1d without bias and SiLU over [q | k | v], beta =
  sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias), q and k repeated per
  value head (repeat_interleave), l2norm (eps 1e-6) of q and k, q scaled by
  head_k_dim**-0.5, the gated delta rule, Qwen3NextRMSNormGated (plain weight,
  norm before the SiLU(z) gate), out_proj.
* Full attention, Qwen3NextAttention: q_proj gives per head [query | gate],
  zero-centred q_norm/k_norm per head, partial rotate-half RoPE on the first
  head_dim * partial_rotary_factor dims, scale head_dim**-0.5, output times
  sigmoid(gate) before o_proj.
* MLP: Qwen3NextSparseMoeBlock (softmax router, top-k, norm_topk_prob, SwiGLU
  experts, shared expert scaled by sigmoid(shared_expert_gate(x))) on layers
  where num_experts > 0, (i + 1) % decoder_sparse_step == 0 and i is not in
  mlp_only_layers; Qwen3NextMLP (intermediate_size) otherwise.

QWEN3_NEXT_DELTA=chunk in the environment uses torch_chunk_gated_delta_rule
(what transformers runs for a prefill) instead of the recurrent form; both
compute the same function.
"""
import os

import numpy as np

from common import (
    causal_attention,
    default_inv_freq,
    llama3_inv_freq,
    sigmoid,
    silu,
    softmax,
    softplus,
)


# Qwen3NextConfig's field defaults, for keys a config.json leaves out.
DEFAULTS = {
    "rms_norm_eps": 1e-6,
    "head_dim": 256,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "decoder_sparse_step": 1,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
    "num_experts_per_tok": 10,
    "num_experts": 512,
    "norm_topk_prob": True,
    "intermediate_size": 5632,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
}


def zc_rms_norm(x, w, eps):
    """Qwen3NextRMSNorm: weight stored around 0, applied as (1 + weight)."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def gated_rms_norm(x, z, w, eps):
    """Qwen3NextRMSNormGated: weight * norm(x), then times silu(z)."""
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * silu(z)


def l2norm(x, eps=1e-6):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


def layer_types(cfg):
    types = cfg.get("layer_types")
    if types is None:
        interval = cfg.get("full_attention_interval", 4)
        return ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(cfg["num_hidden_layers"])]
    # remap_legacy_layer_types
    return [{"mamba": "linear_attention", "attention": "full_attention"}.get(t, t) for t in types]


def rope_parameters(cfg):
    """RotaryEmbeddingConfigMixin: rope_parameters (or legacy rope_scaling),
    rope_theta and partial_rotary_factor moved in from the top level;
    Qwen3NextConfig defaults partial_rotary_factor to 0.25."""
    rp = dict(cfg.get("rope_parameters") or cfg.get("rope_scaling") or {})
    rp.setdefault("rope_theta", cfg.get("rope_theta", 10000.0))
    rp.setdefault("partial_rotary_factor", cfg.get("partial_rotary_factor", 0.25))
    rp.setdefault("rope_type", rp.get("type", "default"))
    return rp


def rotary(cfg, hd, positions):
    rp = rope_parameters(cfg)
    dim = int(hd * rp["partial_rotary_factor"])
    kind = rp["rope_type"]
    if kind == "default":
        inv = default_inv_freq(dim, rp["rope_theta"])
    elif kind == "llama3":
        inv = llama3_inv_freq(dim, rp["rope_theta"], rp)
    else:
        raise ValueError(f"rope_type {kind} is not implemented in this reference")
    freqs = positions[:, None].astype(np.float64) * inv[None, :]
    return np.cos(freqs), np.sin(freqs)


def partial_rotate_half(x, cos, sin):
    """apply_rotary_pos_emb: rotate-half on the first 2*len(cos) dims, pass the rest."""
    rd = 2 * cos.shape[-1]
    c = np.concatenate([cos, cos], axis=-1)[:, None, :]
    s = np.concatenate([sin, sin], axis=-1)[:, None, :]
    xr, xp = x[..., :rd], x[..., rd:]
    half = rd // 2
    rotated = np.concatenate([-xr[..., half:], xr[..., :half]], axis=-1)
    return np.concatenate([xr * c + rotated * s, xp], axis=-1)


def recurrent_gated_delta_rule(q, k, v, g, beta):
    """torch_recurrent_gated_delta_rule with use_qk_l2norm_in_kernel=True.
    q, k: [t, h, dk]; v: [t, h, dv]; g, beta: [t, h]. Returns [t, h, dv]."""
    q, k = l2norm(q), l2norm(k)
    q = q * q.shape[-1] ** -0.5
    t, h, dk = k.shape
    dv = v.shape[-1]
    state = np.zeros((h, dk, dv))
    out = np.zeros((t, h, dv))
    for i in range(t):
        state = state * np.exp(g[i])[:, None, None]
        kv_mem = np.einsum("hkv,hk->hv", state, k[i])
        delta = (v[i] - kv_mem) * beta[i][:, None]
        state = state + k[i][:, :, None] * delta[:, None, :]
        out[i] = np.einsum("hkv,hk->hv", state, q[i])
    return out


def chunk_gated_delta_rule(q, k, v, g, beta, chunk=64):
    """torch_chunk_gated_delta_rule with use_qk_l2norm_in_kernel=True (one batch)."""
    q, k = l2norm(q), l2norm(k)
    q, k, v = (x.transpose(1, 0, 2) for x in (q, k, v))  # [h, t, d]
    g, beta = g.T, beta.T  # [h, t]
    h, t, dk = k.shape
    dv = v.shape[-1]
    pad = (chunk - t % chunk) % chunk
    q, k, v = (np.pad(x, ((0, 0), (0, pad), (0, 0))) for x in (q, k, v))
    g, beta = (np.pad(x, ((0, 0), (0, pad))) for x in (g, beta))
    total = t + pad
    q = q * dk**-0.5
    v_beta = v * beta[..., None]
    k_beta = k * beta[..., None]
    n = total // chunk
    q, k, v, k_beta, v_beta = (x.reshape(h, n, chunk, x.shape[-1]) for x in (q, k, v, k_beta, v_beta))
    g = g.reshape(h, n, chunk).cumsum(-1)
    upper = np.triu(np.ones((chunk, chunk), bool), 0)
    decay = np.tril(np.exp(np.tril(g[..., :, None] - g[..., None, :])))
    attn = -np.where(upper, 0.0, (k_beta @ k.swapaxes(-1, -2)) * decay)
    for i in range(1, chunk):
        row = attn[..., i, :i].copy()
        sub = attn[..., :i, :i].copy()
        attn[..., i, :i] = row + (row[..., :, None] * sub).sum(-2)
    attn = attn + np.eye(chunk)
    value = attn @ v_beta
    k_cumdecay = attn @ (k_beta * np.exp(g)[..., None])
    state = np.zeros((h, dk, dv))
    out = np.zeros_like(value)
    strict = np.triu(np.ones((chunk, chunk), bool), 1)
    for i in range(n):
        q_i, k_i, v_i = q[:, i], k[:, i], value[:, i]
        a = np.where(strict, 0.0, q_i @ k_i.swapaxes(-1, -2) * decay[:, i])
        v_new = v_i - k_cumdecay[:, i] @ state
        inter = (q_i * np.exp(g[:, i])[..., None]) @ state
        out[:, i] = inter + a @ v_new
        state = state * np.exp(g[:, i, -1])[:, None, None] + (
            k_i * np.exp(g[:, i, -1:] - g[:, i])[..., None]
        ).swapaxes(-1, -2) @ v_new
    return out.reshape(h, total, dv)[:, :t].transpose(1, 0, 2)


def gated_delta_net(cfg, w, p, x):
    t = x.shape[0]
    nv, nk = cfg["linear_num_value_heads"], cfg["linear_num_key_heads"]
    dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    r = nv // nk
    ksize = cfg["linear_conv_kernel_dim"]
    eps = cfg["rms_norm_eps"]

    # fix_query_key_value_ordering: per key head [q | k | v (r heads) | z (r heads)], [b (r) | a (r)]
    qkvz = (x @ w[p + "in_proj_qkvz.weight"].T).reshape(t, nk, 2 * dk + 2 * r * dv)
    ba = (x @ w[p + "in_proj_ba.weight"].T).reshape(t, nk, 2 * r)
    q = qkvz[..., :dk].reshape(t, nk * dk)
    k = qkvz[..., dk : 2 * dk].reshape(t, nk * dk)
    v = qkvz[..., 2 * dk : 2 * dk + r * dv].reshape(t, nv * dv)
    z = qkvz[..., 2 * dk + r * dv :].reshape(t, nv, dv)
    b = ba[..., :r].reshape(t, nv)
    a = ba[..., r:].reshape(t, nv)

    # causal depthwise conv1d (padding K-1, first t outputs, bias=False), then SiLU
    mixed = np.concatenate([q, k, v], axis=-1)  # [t, conv_dim]
    cw = w[p + "conv1d.weight"]  # [conv_dim, 1, K]
    cw = cw.reshape(cw.shape[0], ksize)
    padded = np.concatenate([np.zeros((ksize - 1, mixed.shape[1])), mixed], axis=0)
    conv = sum(padded[j : j + t] * cw[:, j][None, :] for j in range(ksize))
    if p + "conv1d.bias" in w:
        conv = conv + w[p + "conv1d.bias"]
    mixed = silu(conv)
    q = mixed[:, : nk * dk].reshape(t, nk, dk)
    k = mixed[:, nk * dk : 2 * nk * dk].reshape(t, nk, dk)
    v = mixed[:, 2 * nk * dk :].reshape(t, nv, dv)

    beta = sigmoid(b)
    g = -np.exp(w[p + "A_log"]) * softplus(a + w[p + "dt_bias"])
    if r > 1:
        q = np.repeat(q, r, axis=1)
        k = np.repeat(k, r, axis=1)

    if os.environ.get("QWEN3_NEXT_DELTA") == "chunk":
        core = chunk_gated_delta_rule(q, k, v, g, beta)
    else:
        core = recurrent_gated_delta_rule(q, k, v, g, beta)
    core = gated_rms_norm(core, z, w[p + "norm.weight"], eps).reshape(t, nv * dv)
    return core @ w[p + "out_proj.weight"].T


def gated_attention(cfg, w, p, x, cos, sin):
    t = x.shape[0]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg["head_dim"]
    eps = cfg["rms_norm_eps"]

    def lin(name, a):
        y = a @ w[p + name + ".weight"].T
        return y + w[p + name + ".bias"] if p + name + ".bias" in w else y

    qg = lin("q_proj", x).reshape(t, heads, 2 * hd)
    q, gate = qg[..., :hd], qg[..., hd:].reshape(t, heads * hd)
    q = zc_rms_norm(q, w[p + "q_norm.weight"], eps)
    k = zc_rms_norm(lin("k_proj", x).reshape(t, kv, hd), w[p + "k_norm.weight"], eps)
    v = lin("v_proj", x).reshape(t, kv, hd)
    q, k = partial_rotate_half(q, cos, sin), partial_rotate_half(k, cos, sin)
    k = np.repeat(k, heads // kv, axis=1)
    v = np.repeat(v, heads // kv, axis=1)
    o = causal_attention(q, k, v, hd**-0.5).reshape(t, heads * hd)
    return lin("o_proj", o * sigmoid(gate))


def swiglu(w, p, x):
    return (silu(x @ w[p + "gate_proj.weight"].T) * (x @ w[p + "up_proj.weight"].T)) @ w[p + "down_proj.weight"].T


def expert_weights(w, p, e, inter):
    """Per-expert checkpoint names (what transformers' conversion merges), or
    the fused in-memory Qwen3NextExperts parameters (gate first in gate_up_proj)."""
    if f"{p}experts.{e}.gate_proj.weight" in w:
        q = f"{p}experts.{e}."
        return w[q + "gate_proj.weight"], w[q + "up_proj.weight"], w[q + "down_proj.weight"]
    gu = w[p + "experts.gate_up_proj"][e]
    return gu[:inter], gu[inter:], w[p + "experts.down_proj"][e]


def sparse_moe(cfg, w, p, x):
    top_k, n = cfg["num_experts_per_tok"], cfg["num_experts"]
    inter = cfg["moe_intermediate_size"]
    probs = softmax(x @ w[p + "gate.weight"].T)
    # torch.topk picks the largest; a stable sort on -probs keeps the lower index first on ties
    idx = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
    weights = np.take_along_axis(probs, idx, axis=-1)
    if cfg["norm_topk_prob"]:
        weights = weights / weights.sum(-1, keepdims=True)
    out = np.zeros_like(x)
    for e in range(n):
        rows, slot = np.nonzero(idx == e)
        if len(rows) == 0:
            continue
        gw, uw, dw = expert_weights(w, p, e, inter)
        h = x[rows]
        y = (silu(h @ gw.T) * (h @ uw.T)) @ dw.T
        np.add.at(out, rows, y * weights[rows, slot][:, None])
    shared = swiglu(w, p + "shared_expert.", x)
    return out + sigmoid(x @ w[p + "shared_expert_gate.weight"].T) * shared


def forward(cfg, w, ids, positions):
    cfg = {**DEFAULTS, **cfg}
    hd = cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    cos, sin = rotary(cfg, hd, positions)
    types = layer_types(cfg)
    mlp_only = cfg.get("mlp_only_layers") or []
    sparse_step = cfg["decoder_sparse_step"]
    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = zc_rms_norm(x, w[p + "input_layernorm.weight"], eps)
        if types[i] == "linear_attention":
            x = x + gated_delta_net(cfg, w, p + "linear_attn.", a)
        elif types[i] == "full_attention":
            x = x + gated_attention(cfg, w, p + "self_attn.", a, cos, sin)
        else:
            raise ValueError(f"layer {i}: unknown layer type {types[i]!r}")
        f = zc_rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        if i not in mlp_only and cfg["num_experts"] > 0 and (i + 1) % sparse_step == 0:
            x = x + sparse_moe(cfg, w, p + "mlp.", f)
        else:
            x = x + swiglu(w, p + "mlp.", f)
    return zc_rms_norm(x, w["model.norm.weight"], eps)
