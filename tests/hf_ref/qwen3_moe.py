"""transformers' Qwen3MoeModel (modeling_qwen3_moe.py): Qwen3's attention (q/k
RMSNorm per head, rotate-half RoPE) with a sparse MoE block on the layers
`decoder_sparse_step` and `mlp_only_layers` pick.

Qwen3MoeTopKRouter: probabilities = softmax over *all* experts of x . gate^T,
top-k of those, renormalised to sum 1 only when norm_topk_prob (default
False). Each chosen expert is a SwiGLU MLP (moe_intermediate_size) and its
output is scaled by its routing weight; no shared expert, no bias.
"""
import numpy as np

from common import rms_norm, softmax
from qwen3 import attention, check_act, dense_mlp, rope_cos_sin


def sparse_moe(x, w, p, cfg):
    e = num_experts(cfg)
    k = cfg.get("num_experts_per_tok", 8)
    probs = softmax(x @ w[p + "gate.weight"].T, axis=-1)  # [t, E]
    assert probs.shape[1] == e, f"{p}gate.weight has {probs.shape[1]} experts, config {e}"
    out = np.zeros_like(x)
    routing = np.zeros_like(probs)  # [t, E]: a token's weight for each expert it chose, else 0
    for t in range(x.shape[0]):
        top = np.argsort(-probs[t], kind="stable")[:k]  # torch.topk; order does not matter
        weights = probs[t, top]
        if cfg.get("norm_topk_prob", False):
            weights = weights / weights.sum()
        routing[t, top] = weights
    for j in range(e):
        rows = np.nonzero(routing[:, j])[0]
        if len(rows):
            out[rows] += routing[rows, j, None] * dense_mlp(x[rows], w, f"{p}experts.{j}.")
    return out


def num_experts(cfg):
    """Qwen3MoeConfig.num_experts (default 128); newer versions alias it to num_local_experts."""
    return cfg.get("num_experts", cfg.get("num_local_experts", 128))


def is_sparse(cfg, i):
    """Qwen3MoeDecoderLayer: sparse unless listed in mlp_only_layers, and only every
    decoder_sparse_step-th layer ((i + 1) % step == 0)."""
    mlp_only = cfg.get("mlp_only_layers") or []
    return i not in mlp_only and num_experts(cfg) > 0 and (i + 1) % cfg.get("decoder_sparse_step", 1) == 0


def forward(cfg, w, ids, positions):
    check_act(cfg)
    # Qwen3MoeAttention: getattr(config, "head_dim", hidden_size // num_attention_heads)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    eps = cfg.get("rms_norm_eps", 1e-6)
    # Qwen3MoeConfig keeps sliding_window only with use_sliding_window; the model
    # then builds a sliding-window mask for every layer.
    window = cfg.get("sliding_window", 4096) if cfg.get("use_sliding_window", False) else 0
    cos, sin = rope_cos_sin(cfg, hd, positions)
    x = w["model.embed_tokens.weight"][ids]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        x = x + attention(a, w, p, cfg, hd, cos, sin, qk_norm=True, window=window or 0)
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        if is_sparse(cfg, i):
            x = x + sparse_moe(f, w, p + "mlp.", cfg)
        else:
            x = x + dense_mlp(f, w, p + "mlp.")
    return rms_norm(x, w["model.norm.weight"], eps)
