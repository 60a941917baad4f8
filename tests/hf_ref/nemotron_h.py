"""transformers' NemotronHModel (modeling_nemotron_h.py, incl. the Nemotron-3
MoE 'E' layers): one RMSNorm per block then its mixer and a residual add;
Mamba2 mixers (NemotronHMamba2Mixer.torch_forward), attention without RoPE,
ReLU^2 MLPs and sigmoid-routed ReLU^2 experts with shared experts; norm_f.

Config keys are read the way NemotronHConfig reads them (its defaults when a
key is absent, its legacy aliases such as mamba_n_groups, and the layer list
from layers_block_type or hybrid_override_pattern).
"""
import sys

import numpy as np

from common import causal_attention, sigmoid, silu, softplus

# NemotronHConfig's class defaults (configuration_nemotron_h.py).
DEFAULTS = {
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "mlp_hidden_act": "relu2",
    "ssm_state_size": 128,
    "mamba_num_heads": 128,
    "mamba_head_dim": 64,
    "mamba_hidden_act": "silu",
    "n_groups": 8,
    "conv_kernel": 4,
    "time_step_min": 0.001,
    "time_step_limit": (0.0, float("inf")),
    "use_conv_bias": True,
    "n_routed_experts": 8,
    "moe_latent_size": None,
    "num_experts_per_tok": 2,
    "routed_scaling_factor": 1.0,
    "n_group": 1,
    "topk_group": 1,
    "norm_topk_prob": True,
    "layer_norm_epsilon": 1e-5,
}

# __post_init__'s backward-compatible names.
ALIASES = {
    "mamba_n_groups": "n_groups",
    "mamba_d_conv": "conv_kernel",
    "mamba_dt_min": "time_step_min",
    "mamba_dt_limit": "time_step_limit",
    "mamba_conv_bias": "use_conv_bias",
}

PATTERN = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}
# Both the current names (linear_attention / full_attention) and the legacy
# ones (mamba / attention) name the same four mixers.
KIND = {
    "mamba": "mamba",
    "linear_attention": "mamba",
    "attention": "attention",
    "full_attention": "attention",
    "moe": "moe",
    "mlp": "mlp",
}

# Diagnostics about the places where the Hub's remote code and transformers'
# in-library code could disagree (reported on stderr, never silently).
_notes = set()


def note(msg):
    if msg not in _notes:
        _notes.add(msg)
        print("nemotron_h reference: " + msg, file=sys.stderr)


def get(cfg, key):
    for old, new in ALIASES.items():
        if new == key and old in cfg:
            return cfg[old]
    if key in cfg and cfg[key] is not None:
        return cfg[key]
    return DEFAULTS[key]


def layer_types(cfg):
    if cfg.get("layers_block_type"):
        return [KIND[t] for t in cfg["layers_block_type"]]
    if cfg.get("layer_types"):
        return [KIND[t] for t in cfg["layer_types"]]
    if "hybrid_override_pattern" in cfg:
        return [PATTERN[c] for c in cfg["hybrid_override_pattern"]]
    return ["mamba", "moe", "attention", "mlp"]


def act(name):
    if name == "relu2":  # ReLUSquaredActivation
        return lambda x: np.square(np.maximum(x, 0))
    if name == "relu":
        return lambda x: np.maximum(x, 0)
    if name in ("silu", "swish"):
        return silu
    raise ValueError(f"activation {name!r} is not one the reference knows")


def rms_norm(x, w, eps):
    # NemotronHRMSNorm: weight * x / sqrt(mean(x^2) + eps)
    return w * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def gated_rms_norm(y, z, w, group_size, eps):
    """Zamba2RMSNormGated(y, gate=z): y * silu(z), RMS-normalised within
    consecutive groups of group_size channels, times the weight."""
    h = y * silu(z)
    t, width = h.shape
    g = h.reshape(t, width // group_size, group_size)
    g = g / np.sqrt(np.mean(g * g, axis=-1, keepdims=True) + eps)
    return w * g.reshape(t, width)


def linear(x, w, p):
    out = x @ w[p + ".weight"].T
    if p + ".bias" in w:
        out = out + w[p + ".bias"]
    return out


def mamba(cfg, w, p, x):
    t = x.shape[0]
    heads, hd = get(cfg, "mamba_num_heads"), get(cfg, "mamba_head_dim")
    groups, n = get(cfg, "n_groups"), get(cfg, "ssm_state_size")
    inner = heads * hd
    conv_dim = inner + 2 * groups * n
    eps = get(cfg, "layer_norm_epsilon")

    proj = linear(x, w, p + "in_proj")
    d_mlp = (proj.shape[-1] - 2 * inner - 2 * groups * n - heads) // 2
    # split [d_mlp, d_mlp, intermediate (gate), conv_dim (xBC), num_heads (dt)]
    o = 2 * d_mlp
    gate = proj[:, o : o + inner]
    xbc = proj[:, o + inner : o + inner + conv_dim]
    dt = proj[:, o + inner + conv_dim :]
    assert dt.shape[1] == heads, (p, proj.shape)

    # Depthwise causal conv1d (padding K-1, first T outputs) + bias, then act.
    cw = w[p + "conv1d.weight"]  # [conv_dim, 1, K]
    k = cw.shape[-1]
    padded = np.concatenate([np.zeros((k - 1, conv_dim)), xbc], axis=0)
    conv = np.zeros((t, conv_dim))
    for j in range(k):
        conv += padded[j : j + t] * cw[:, 0, j][None, :]
    if get(cfg, "use_conv_bias") and p + "conv1d.bias" in w:
        conv += w[p + "conv1d.bias"]
    xbc = act(get(cfg, "mamba_hidden_act"))(conv)
    xs = xbc[:, :inner].reshape(t, heads, hd)
    B = xbc[:, inner : inner + groups * n].reshape(t, groups, n)
    C = xbc[:, inner + groups * n :].reshape(t, groups, n)
    # repeat_interleave(num_heads // n_groups) over the group axis: head h
    # reads group h // (num_heads / n_groups).
    B = np.repeat(B, heads // groups, axis=1)
    C = np.repeat(C, heads // groups, axis=1)

    # dt = softplus(dt + dt_bias) clamped to time_step_limit: what
    # cuda_kernels_forward hands mamba_chunk_scan_combined (dt_softplus=True,
    # dt_limit=time_step_limit) and what the Hub's remote code does in its
    # torch_forward too. transformers' in-library torch_forward instead clamps
    # only below, at time_step_min (a Zamba2 leftover); the two agree unless
    # a dt falls below time_step_min or above time_step_limit's upper end,
    # which is reported.
    raw = softplus(dt + w[p + "dt_bias"])
    tmin = get(cfg, "time_step_min")
    lo, hi = get(cfg, "time_step_limit")
    if np.any(raw < tmin) or np.any(raw > hi):
        note(
            f"some dt fall outside [time_step_min={tmin}, time_step_limit[1]={hi}]: "
            "clamped to time_step_limit as transformers' CUDA path and the Hub code do; "
            "transformers' in-library torch_forward would clamp at time_step_min only"
        )
    dt = np.clip(raw, lo, hi)
    A = -np.exp(w[p + "A_log"])
    D = w[p + "D"]

    # The SSD recurrence, per head: state = exp(dt A) state + dt x B^T;
    # y = state C + D x. The chunked scan (cuda_kernels_forward, and
    # torch_forward within one chunk) computes exactly this. Beyond one chunk
    # transformers' torch_forward (shared with Zamba2) sums the inter-chunk
    # decay over the target chunk instead of the source (huggingface/
    # transformers#47246, the #34817 Mamba2 bug); the recurrence here is the
    # intended one, which the CUDA path computes.
    state = np.zeros((heads, hd, n))
    y = np.zeros((t, heads, hd))
    for i in range(t):
        decay = np.exp(dt[i] * A)  # [heads]
        state = state * decay[:, None, None] + (dt[i][:, None, None] * xs[i][:, :, None]) * B[i][:, None, :]
        y[i] = np.einsum("hpn,hn->hp", state, C[i]) + D[:, None] * xs[i]
    y = y.reshape(t, inner)
    y = gated_rms_norm(y, gate, w[p + "norm.weight"], inner // groups, eps)
    return linear(y, w, p + "out_proj")


def attention(cfg, w, p, x):
    t = x.shape[0]
    heads = get(cfg, "num_attention_heads")
    # __post_init__: a null num_key_value_heads means one per attention head.
    kv = cfg.get("num_key_value_heads", DEFAULTS["num_key_value_heads"]) or heads
    hd = get(cfg, "head_dim")
    qw = w[p + "q_proj.weight"]
    if qw.shape[0] != heads * hd:
        raise ValueError(
            f"{p}q_proj.weight is {qw.shape} but NemotronHAttention builds it [num_attention_heads*head_dim="
            f"{heads}*{hd}, hidden]; config.json's head_dim (default 128 when absent) does not fit the checkpoint"
        )
    q = linear(x, w, p + "q_proj").reshape(t, heads, hd)
    k = linear(x, w, p + "k_proj").reshape(t, kv, hd)
    v = linear(x, w, p + "v_proj").reshape(t, kv, hd)
    # No rotary embedding is applied in NemotronHAttention.forward.
    k = np.repeat(k, heads // kv, axis=1)
    v = np.repeat(v, heads // kv, axis=1)
    o = causal_attention(q, k, v, hd**-0.5).reshape(t, heads * hd)
    return linear(o, w, p + "o_proj")


def mlp(cfg, w, p, x):
    f = act(get(cfg, "mlp_hidden_act"))
    return linear(f(linear(x, w, p + "up_proj")), w, p + "down_proj")


def expert_weights(w, p, e):
    """Per-expert (the Hub checkpoints) or fused [E, out, in] tensors."""
    if f"{p}experts.{e}.up_proj.weight" in w:
        return w[f"{p}experts.{e}.up_proj.weight"], w[f"{p}experts.{e}.down_proj.weight"]
    return w[p + "experts.up_proj"][e], w[p + "experts.down_proj"][e]


def moe(cfg, w, p, x):
    t = x.shape[0]
    experts = get(cfg, "n_routed_experts")
    top_k = get(cfg, "num_experts_per_tok")
    n_group, topk_group = get(cfg, "n_group"), get(cfg, "topk_group")
    f = act(get(cfg, "mlp_hidden_act"))

    # NemotronHMoE.route_tokens_to_experts
    scores = sigmoid(x @ w[p + "gate.weight"].T)  # [t, experts]
    bias = w.get(p + "gate.e_score_correction_bias", np.zeros(experts))
    choice = scores + bias
    per = experts // n_group
    grouped = choice.reshape(t, n_group, per)
    group_scores = -np.sort(-grouped, axis=-1)[..., : min(2, per)].sum(-1)  # top-2 sum per group
    group_idx = np.argsort(-group_scores, axis=-1, kind="stable")[:, :topk_group]
    group_mask = np.zeros((t, n_group), dtype=bool)
    np.put_along_axis(group_mask, group_idx, True, axis=1)
    masked = np.where(np.repeat(group_mask, per, axis=1), choice, -np.inf)
    order = np.argsort(-masked, axis=-1, kind="stable")
    idx = order[:, :top_k]
    kth = np.take_along_axis(masked, order[:, top_k - 1 : top_k], axis=1)[:, 0]
    nxt = np.take_along_axis(masked, order[:, top_k : top_k + 1], axis=1)[:, 0] if top_k < experts else kth - 1
    gap = float(np.min(kth - nxt)) if t else 1.0
    if gap < 1e-6:
        note(f"{p}: a near tie at the top-k boundary (gap {gap:.2g}); a selection flip is possible")
    weights = np.take_along_axis(scores, idx, axis=1)
    if get(cfg, "norm_topk_prob"):
        weights = weights / (weights.sum(-1, keepdims=True) + 1e-20)
    weights = weights * get(cfg, "routed_scaling_factor")

    h = x
    if get(cfg, "moe_latent_size") is not None:
        h = linear(h, w, p + "fc1_latent_proj")
    out = np.zeros_like(h)
    for e in np.unique(idx):
        rows, slot = np.nonzero(idx == e)
        up, down = expert_weights(w, p, int(e))
        out[rows] += (f(h[rows] @ up.T) @ down.T) * weights[rows, slot][:, None]
    if get(cfg, "moe_latent_size") is not None:
        out = linear(out, w, p + "fc2_latent_proj")
    return out + mlp(cfg, w, p + "shared_experts.", x)


MIXERS = {"mamba": mamba, "attention": attention, "mlp": mlp, "moe": moe}


def prefix(w):
    # Hub checkpoints say backbone.*; transformers' own module tree says model.*
    return "backbone." if "backbone.embeddings.weight" in w else "model."


def forward(cfg, w, ids, positions):
    eps = get(cfg, "layer_norm_epsilon")
    b = prefix(w)
    x = w[b + "embeddings.weight"][ids]
    for i, kind in enumerate(layer_types(cfg)):
        p = f"{b}layers.{i}."
        h = rms_norm(x, w[p + "norm.weight"], eps)
        x = x + MIXERS[kind](cfg, w, p + "mixer.", h)
    return rms_norm(x, w[b + "norm_f.weight"], eps)
