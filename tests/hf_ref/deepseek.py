"""transformers' DeepseekV2Model (modeling_deepseek_v2.py) and DeepseekV3Model
(modeling_deepseek_v3.py); kimi_k2 is a DeepseekV3ForCausalLM (its remote
modeling_deepseek.py is DeepSeek-V3's) and takes the V3 path.

Multi-head latent attention:
    q      = q_proj(x)                      or q_b_proj(rms(q_a_proj(x), eps=1e-6))
    [c|kr] = kv_a_proj_with_mqa(x)          c: kv_lora_rank, kr: qk_rope_head_dim (one head, shared)
    [kn|v] = kv_b_proj(rms(c, eps=1e-6))    per head qk_nope_head_dim + v_head_dim
    q = [q_nope | rope(q_rope)], k = [kn | rope(kr)], softmax(q.k * scale) v, o_proj.
The q_a/kv_a norms are built as DeepseekV2RMSNorm(rank) and so keep the class
default eps 1e-6, not rms_norm_eps.

RoPE runs on the qk_rope_head_dim slice only (config.head_dim is set to
qk_rope_head_dim by both config classes) with adjacent-pair rotation: V2
multiplies (x[2i], x[2i+1]) as one complex number by freqs_cis (torch.polar
times attention_scaling); V3 with rope_interleave (the default) first
permutes to [evens | odds] and then rotates half, which pairs the same
elements; V3 without rope_interleave rotates half on the raw layout.

YaRN (`_compute_yarn_parameters`): inverse frequencies blended between
extrapolation and interpolation (1/factor) over the beta_fast..beta_slow
correction range (floor/ceil when truncate, the default) computed with
original_max_position_embeddings; cos/sin scaled by attention_factor =
mscale(factor, mscale)/mscale(factor, mscale_all_dim) when both are set, else
mscale(factor). The softmax scale is qk_head_dim^-0.5, times
mscale(factor, mscale_all_dim)^2 when the rope is not default and
mscale_all_dim is set (DeepseekV3Attention; DeepseekV2Attention since
transformers PR #47435).

Routers:
  V2 (DeepseekV2Moe.route_tokens_to_experts): softmax over the router logits;
     topk_method greedy = plain top-k, group_limited_greedy = keep the
     topk_group groups with the largest max score, zero the rest, top-k;
     weights = top-k probabilities * routed_scaling_factor, always
     (transformers' V2 never renormalises: norm_topk_prob is not read).
  V3 (DeepseekV3TopkRouter): sigmoid scores; selection on scores +
     e_score_correction_bias: group score = sum of the group's best two,
     keep topk_group groups, the others filled with 0.0, top-k; weights are
     the sigmoid scores (no bias) of the chosen experts, divided by their
     sum + 1e-20 when norm_topk_prob, then times routed_scaling_factor.
Layer i is MoE when i >= first_k_dense_replace (transformers does not read
moe_layer_freq; kimi_k2's remote code also asks i % moe_layer_freq == 0).
MoE output = sum_k w_k expert_k(x) + shared_experts(x), experts SwiGLU.
"""

import numpy as np

from common import causal_attention, default_inv_freq, get_mscale, rms_norm, sigmoid, silu, softmax, yarn_inv_freq

# Constructor defaults of the config classes, for keys a config.json leaves out.
V2_DEFAULTS = dict(
    first_k_dense_replace=0, q_lora_rank=1536, n_group=None, topk_group=None, topk_method="greedy",
    routed_scaling_factor=1.0, n_shared_experts=2, qk_nope_head_dim=128, qk_rope_head_dim=64,
    v_head_dim=128, kv_lora_rank=512, moe_intermediate_size=1407, n_routed_experts=64,
    rms_norm_eps=1e-6, hidden_act="silu", rope_theta=10000.0,
)
V3_DEFAULTS = dict(
    first_k_dense_replace=3, q_lora_rank=1536, n_group=8, topk_group=4, norm_topk_prob=True,
    routed_scaling_factor=2.5, n_shared_experts=1, qk_nope_head_dim=128, qk_rope_head_dim=64,
    v_head_dim=128, kv_lora_rank=512, moe_intermediate_size=2048, n_routed_experts=256,
    num_experts_per_tok=8, rms_norm_eps=1e-6, hidden_act="silu", rope_interleave=True, rope_theta=10000.0,
)
LATENT_NORM_EPS = 1e-6  # DeepseekV2RMSNorm / DeepseekV3RMSNorm default, used by q_a_layernorm and kv_a_layernorm


class Cfg:
    def __init__(self, cfg):
        self.raw = cfg
        self.model_type = cfg["model_type"]
        self.v3 = self.model_type in ("deepseek_v3", "kimi_k2")
        self.defaults = V3_DEFAULTS if self.v3 else V2_DEFAULTS

    def __getitem__(self, key):
        if key in self.raw:
            return self.raw[key]
        if key in self.defaults:
            return self.defaults[key]
        raise KeyError(f"config.json has no {key!r} and {self.model_type}'s config class no default for it")


def rope_parameters(c):
    """config.rope_scaling (old form, `type`) or rope_parameters (transformers 5), with rope_theta."""
    s = c.raw.get("rope_parameters") or c.raw.get("rope_scaling") or {}
    s = dict(s)
    kind = s.get("rope_type", s.get("type", "default"))
    s["rope_type"] = kind
    s.setdefault("rope_theta", c.raw.get("rope_theta", c.defaults["rope_theta"]))
    return s


def yarn(dim, c, s):
    """`_compute_yarn_parameters`: (inv_freq, attention_factor); the original
    length defaults to max_position_embeddings."""
    original = s.get("original_max_position_embeddings") or c.raw["max_position_embeddings"]
    return yarn_inv_freq(dim, s["rope_theta"], float(s["factor"]), original, s)


def rotary(c, dim):
    """(inv_freq, attention_scaling, softmax-scale multiplier)."""
    s = rope_parameters(c)
    kind = s["rope_type"]
    if kind == "default":
        return default_inv_freq(dim, s["rope_theta"]), 1.0, 1.0
    if kind != "yarn":
        raise ValueError(f"rope_type {kind!r}: the DeepSeek reference knows default and yarn")
    inv, attention_factor = yarn(dim, c, s)
    multiplier = 1.0
    mscale_all_dim = s.get("mscale_all_dim", 0)
    if mscale_all_dim:
        m = get_mscale(float(s["factor"]), mscale_all_dim)
        multiplier = m * m
    return inv, attention_factor, multiplier


def rope_adjacent(x, cos, sin):
    """V2's apply_rotary_emb: pairs (x[2i], x[2i+1]) times (cos + i sin)."""
    re, im = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(x)
    out[..., 0::2] = re * c - im * s
    out[..., 1::2] = re * s + im * c
    return out


def rope_rotate_half(x, cos, sin):
    c = np.concatenate([cos, cos], axis=-1)[:, None, :]
    s = np.concatenate([sin, sin], axis=-1)[:, None, :]
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * c + rotated * s


def rope_interleave(x, cos, sin):
    """V3's apply_rotary_pos_emb_interleave: view (d/2, 2), transpose -> [evens | odds], rotate half."""
    t, h, d = x.shape
    x = x.reshape(t, h, d // 2, 2).transpose(0, 1, 3, 2).reshape(t, h, d)
    return rope_rotate_half(x, cos, sin)


def mlp(x, w, p):
    return (silu(x @ w[p + "gate_proj.weight"].T) * (x @ w[p + "up_proj.weight"].T)) @ w[p + "down_proj.weight"].T


def expert_weights(w, p, e):
    """(gate, up, down) of expert e: per-expert HF names, or the fused gate_up_proj/down_proj."""
    name = f"{p}experts.{e}."
    if name + "gate_proj.weight" in w:
        return w[name + "gate_proj.weight"], w[name + "up_proj.weight"], w[name + "down_proj.weight"]
    gate_up = w[p + "experts.gate_up_proj"][e]
    half = gate_up.shape[0] // 2
    return gate_up[:half], gate_up[half:], w[p + "experts.down_proj"][e]


def top_k(scores, k):
    """Indices of the k largest per row (ties: lower index first)."""
    return np.argsort(-scores, axis=-1, kind="stable")[:, :k]


def route_v2(c, logits):
    probs = softmax(logits)
    k = c["num_experts_per_tok"]
    method = c["topk_method"]
    if method == "greedy":
        chosen = probs
    elif method == "group_limited_greedy":
        groups = c["n_group"]
        t, n = probs.shape
        group_scores = probs.reshape(t, groups, n // groups).max(axis=-1)
        keep = np.zeros_like(group_scores, dtype=bool)
        np.put_along_axis(keep, top_k(group_scores, c["topk_group"]), True, axis=-1)
        chosen = np.where(np.repeat(keep, n // groups, axis=-1), probs, 0.0)
    else:
        raise ValueError(f"DeepseekV2Moe knows topk_method greedy and group_limited_greedy, not {method!r}")
    idx = top_k(chosen, k)
    weights = np.take_along_axis(chosen, idx, axis=-1) * c["routed_scaling_factor"]
    return idx, weights


def route_v3(c, logits, bias):
    scores = sigmoid(logits)
    t, n = scores.shape
    groups = c["n_group"]
    choice = scores + bias[None, :]
    group_scores = np.sort(choice.reshape(t, groups, n // groups), axis=-1)[..., -2:].sum(axis=-1)
    keep = np.zeros_like(group_scores, dtype=bool)
    np.put_along_axis(keep, top_k(group_scores, c["topk_group"]), True, axis=-1)
    choice = np.where(np.repeat(keep, n // groups, axis=-1), choice, 0.0)
    idx = top_k(choice, c["num_experts_per_tok"])
    weights = np.take_along_axis(scores, idx, axis=-1)
    if c["norm_topk_prob"]:
        weights = weights / (weights.sum(axis=-1, keepdims=True) + 1e-20)
    return idx, weights * c["routed_scaling_factor"]


def moe(c, x, w, p):
    logits = x @ w[p + "gate.weight"].T
    if c.v3:
        bias_name = p + "gate.e_score_correction_bias"
        if bias_name not in w:
            raise KeyError(f"{bias_name} missing: DeepseekV3TopkRouter keeps the correction bias there")
        idx, weights = route_v3(c, logits, w[bias_name])
    else:
        idx, weights = route_v2(c, logits)
    out = np.zeros_like(x)
    for e in np.unique(idx):
        rows, slot = np.nonzero(idx == e)
        gate, up, down = expert_weights(w, p, e)
        h = x[rows]
        y = (silu(h @ gate.T) * (h @ up.T)) @ down.T
        out[rows] += y * weights[rows, slot][:, None]
    return out + mlp(x, w, p + "shared_experts.")


def is_moe_layer(c, i):
    if i < c["first_k_dense_replace"]:
        return False
    if c.model_type == "kimi_k2":  # remote modeling_deepseek.py: layer_idx % moe_layer_freq == 0
        return i % c.raw.get("moe_layer_freq", 1) == 0
    return True


def attention(c, a, w, p, cos, sin, scale):
    t = a.shape[0]
    heads = c["num_attention_heads"]
    if c.raw.get("num_key_value_heads", heads) != heads:
        raise ValueError("MLA builds one key per head: num_key_value_heads must equal num_attention_heads")
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    lora = c["kv_lora_rank"]
    if c["q_lora_rank"] is None:
        q = a @ w[p + "q_proj.weight"].T
    else:
        q = rms_norm(a @ w[p + "q_a_proj.weight"].T, w[p + "q_a_layernorm.weight"], LATENT_NORM_EPS)
        q = q @ w[p + "q_b_proj.weight"].T
    q = q.reshape(t, heads, nope + rope)
    q_nope, q_rope = q[..., :nope], q[..., nope:]
    compressed = a @ w[p + "kv_a_proj_with_mqa.weight"].T
    latent, k_rope = compressed[:, :lora], compressed[:, lora:].reshape(t, 1, rope)
    kv = rms_norm(latent, w[p + "kv_a_layernorm.weight"], LATENT_NORM_EPS) @ w[p + "kv_b_proj.weight"].T
    kv = kv.reshape(t, heads, nope + vd)
    k_nope, v = kv[..., :nope], kv[..., nope:]
    if not c.v3:
        rotate = rope_adjacent
    elif c.model_type == "kimi_k2" or c["rope_interleave"]:
        rotate = rope_interleave
    else:
        rotate = rope_rotate_half
    q_rope, k_rope = rotate(q_rope, cos, sin), rotate(k_rope, cos, sin)
    q = np.concatenate([q_nope, q_rope], axis=-1)
    k = np.concatenate([k_nope, np.broadcast_to(k_rope, (t, heads, rope))], axis=-1)
    o = causal_attention(q, k, v, scale).reshape(t, heads * vd)
    return o @ w[p + "o_proj.weight"].T


def forward(cfg, w, ids, positions):
    c = Cfg(cfg)
    if c["hidden_act"] != "silu":
        raise ValueError(f"hidden_act {c['hidden_act']!r}: the reference computes SwiGLU with silu")
    eps = c["rms_norm_eps"]
    rope = c["qk_rope_head_dim"]
    inv, attention_scaling, multiplier = rotary(c, rope)
    freqs = positions[:, None].astype(np.float64) * inv[None, :]
    cos, sin = np.cos(freqs) * attention_scaling, np.sin(freqs) * attention_scaling
    scale = (c["qk_nope_head_dim"] + rope) ** -0.5 * multiplier
    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        x = x + attention(c, a, w, p + "self_attn.", cos, sin, scale)
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + (moe(c, f, w, p + "mlp.") if is_moe_layer(c, i) else mlp(f, w, p + "mlp."))
    return rms_norm(x, w["model.norm.weight"], eps)
