"""transformers' GptOssModel (modeling_gpt_oss.py).

- attention: q/k/v/o projections always biased (GptOssConfig forces
  attention_bias), rotate-half RoPE (`_apply_rotary_emb` pairs dim i with
  i + head_dim/2), scaling head_dim**-0.5, one learned sink logit per head
  that joins the softmax and is dropped afterwards, and a sliding window on
  the layers `layer_types` marks sliding_attention (default: even layers).
- GptOssTopKRouter: logits = x . W^T + b, top-k of the *logits*, softmax over
  those k only.
- GptOssExperts: gate_up = x @ gate_up_proj[e] + gate_up_proj_bias[e] with
  gate_up_proj [E, hidden, 2I] (gate at even, up at odd last-dim indices);
  gate = min(gate, limit), up = clamp(up, -limit, limit),
  glu = gate * sigmoid(alpha * gate), out = ((up + 1) * glu) @ down_proj[e] + down_proj_bias[e],
  weighted by the routing weight and summed.

The clamp limit: GptOssConfig documents swiglu_limit (default 7.0) and
swiglu_alpha (default 1.702) as the clamp and gain of this SwiGLU, the MXFP4
experts read `getattr(config, "swiglu_limit", 7.0)`, and OpenAI's reference
reads the config too; several transformers releases' dense GptOssExperts
hard-code `self.limit = 7.0` / `self.alpha = 1.702` instead, which only agrees
when the checkpoint's swiglu_limit is 7.0. This reference reads the config;
set HF_REF_GPT_OSS_LIMIT=7 to reproduce the hard-coded releases.
"""
import os
import sys

import numpy as np

from common import rms_norm, sigmoid, softmax
from qwen3 import attention, rope_cos_sin

# GptOssConfig's default rope when config.json names none (rope_parameters /
# rope_scaling absent): YaRN, factor 32 over 4096 positions, no truncation.
DEFAULT_ROPE = {
    "rope_type": "yarn",
    "factor": 32.0,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "truncate": False,
    "original_max_position_embeddings": 4096,
}


_warned = []


def swiglu_limit(cfg):
    forced = os.environ.get("HF_REF_GPT_OSS_LIMIT")
    return float(forced) if forced else float(cfg.get("swiglu_limit", 7.0))


def experts(x, w, p, cfg):
    e = cfg.get("num_local_experts", cfg.get("num_experts", 128))
    k = cfg.get("num_experts_per_tok", 4)
    limit = swiglu_limit(cfg)
    alpha = float(cfg.get("swiglu_alpha", 1.702))
    logits = x @ w[p + "router.weight"].T + w[p + "router.bias"]  # [t, E]
    assert logits.shape[1] == e, f"{p}router.weight has {logits.shape[1]} experts, config {e}"
    routing = np.zeros_like(logits)
    for t in range(x.shape[0]):
        top = np.argsort(-logits[t], kind="stable")[:k]  # torch.topk on the logits
        routing[t, top] = softmax(logits[t, top])
    gate_up_proj = w[p + "experts.gate_up_proj"]  # [E, hidden, 2I]
    gate_up_bias = w[p + "experts.gate_up_proj_bias"]  # [E, 2I]
    down_proj = w[p + "experts.down_proj"]  # [E, I, hidden]
    down_bias = w[p + "experts.down_proj_bias"]  # [E, hidden]
    out = np.zeros_like(x)
    for j in range(e):
        rows = np.nonzero(routing[:, j])[0]
        if not len(rows):
            continue
        gate_up = x[rows] @ gate_up_proj[j] + gate_up_bias[j]
        gate, up = gate_up[:, ::2], gate_up[:, 1::2]
        gate = np.minimum(gate, limit)
        up = np.clip(up, -limit, limit)
        glu = gate * sigmoid(gate * alpha)
        y = ((up + 1) * glu) @ down_proj[j] + down_bias[j]
        out[rows] += routing[rows, j, None] * y
    return out


def forward(cfg, w, ids, positions):
    n = cfg["num_hidden_layers"]
    heads = cfg["num_attention_heads"]
    hd = cfg.get("head_dim", 64) or cfg["hidden_size"] // heads
    eps = cfg.get("rms_norm_eps", 1e-5)
    types = cfg.get("layer_types") or ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    window = cfg.get("sliding_window", 128) or 0
    if not cfg.get("rope_parameters") and not cfg.get("rope_scaling") and "rope_scaling" in cfg and not _warned:
        _warned.append(True)
        print(
            "gpt_oss: config.json says rope_scaling null and names no rope_parameters: transformers 4.x reads"
            " plain RoPE (as here), 5.x falls back to GptOssConfig's YaRN default",
            file=sys.stderr,
        )
    cos, sin = rope_cos_sin(cfg, hd, positions, DEFAULT_ROPE)
    x = w["model.embed_tokens.weight"][ids]
    for i in range(n):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        x = x + attention(
            a,
            w,
            p,
            cfg,
            hd,
            cos,
            sin,
            qk_norm=False,
            window=window if types[i] == "sliding_attention" else 0,
            sinks=w[p + "self_attn.sinks"],
            bias=True,
        )
        f = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + experts(f, w, p + "mlp.", cfg)
    return rms_norm(x, w["model.norm.weight"], eps)
