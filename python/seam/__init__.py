"""seam: plans, checks and runs the communication at the seams of a
transformer under mixed parallelism (tensor parallel, attention data
parallel, MoE all-to-all, dense FFN data parallel, input-scattered attention,
pipeline parallel).

>>> import seam
>>> p = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a")
>>> print(p.table())                          # what `seam plan` prints
>>> for stage in p.ranks[0].line().stages:    # the plan as Python values
...     print(stage.index, stage.kind, [str(s) for s in stage.collectives])
>>> seam.verify(p)                            # raises seam.CheckFailed on a broken invariant
>>> r = seam.run("llama", tp=2, pp=2)         # threads against the unsharded reference
>>> bool((r.hidden == r.reference).all())
True

Every failure is a :class:`seam.Error`: :class:`BadInput` (also a
``ValueError``) for what cannot be planned, :class:`CheckFailed` for a plan or
run that fails its check.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from . import _seam
from ._errors import BadInput, CheckFailed, Deadline, Error, InternalError
from ._plan import (Boundary, Config, End, EngineReading, Line, Plan, Rank, Stage, Step, ValueFacts)

__version__: str = _seam.__version__

__all__ = [
    "__version__", "models", "Model", "plan", "plan_for_engine", "load", "verify", "diff", "compare", "Comparison",
    "Candidate", "run", "RunResult", "Plan", "Rank", "Line", "Stage", "Step", "End", "Boundary", "ValueFacts",
    "Config", "EngineReading", "Error", "BadInput", "CheckFailed", "Deadline", "InternalError",
]


@dataclass(frozen=True)
class Model:
    """A catalogue entry: its stage pattern, the features it runs with, and
    the real config.json its full size comes from (``None``: tiny shape only)."""

    name: str
    summary: str
    stages: str
    features: str
    real_config: str | None


def models() -> list[Model]:
    """The catalogue of model families seam knows (``seam models``)."""
    return [Model(**json.loads(m)) for m in _seam.models()]


def _model_args(model: str | os.PathLike[str]) -> tuple[str, str]:
    """(catalogue name, config path): a path-like, a name ending in .json or
    one holding a path separator is a Hugging Face config.json."""
    if isinstance(model, os.PathLike):
        return "", os.fspath(model)
    if not isinstance(model, str):
        raise BadInput(f"model must be a catalogue name or a config.json path, not {type(model).__name__}")
    if model.endswith(".json") or os.sep in model or "/" in model:
        return "", model
    return model, ""


def _int(name: str, value: object, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{name} must be an int, not {type(value).__name__}")
    if value < lo or value > 1 << 30:
        raise BadInput(f"{name}={value} must be at least {lo}" if value < lo else f"{name}={value} is too large")
    return value


def _config(tp: int, attn_dp: int, dense_tp: int | None, ep: int | None, moe: str, reduction: str,
            input_scattered: bool, dp_lm_head: bool, pp: int | None, pp_split: Sequence[int] | None) -> Any:
    c = _seam.ConfigArgs()
    c.tp = _int("tp", tp, 1)
    c.attn_dp = _int("attn_dp", attn_dp, 1)
    c.dense_tp = 0 if dense_tp is None else _int("dense_tp", dense_tp, 1)
    c.ep = 0 if ep is None else _int("ep", ep, 1)
    c.moe = str(moe)
    c.reduction = str(reduction)
    c.input_scattered = bool(input_scattered)
    c.dp_lm_head = bool(dp_lm_head)
    c.pp = 0 if pp is None else _int("pp", pp, 1)
    c.pp_split = [] if pp_split is None else [_int("pp_split", n, 1) for n in pp_split]
    return c


def plan(model: str | os.PathLike[str], *, tp: int = 1, attn_dp: int = 1, dense_tp: int | None = None,
         ep: int | None = None, moe: str = "tp", reduction: str = "ar", input_scattered: bool = False,
         dp_lm_head: bool = False, pp: int | None = None, pp_split: Sequence[int] | None = None,
         layers: int | None = None, act_dtype: str = "bf16", dispatch_dtype: str | None = None) -> Plan:
    """Binds and verifies the plan of every pipeline rank, as ``seam plan`` does.

    ``model`` is a catalogue name (see :func:`models`) or a Hugging Face
    config.json path. The keywords are ``seam plan``'s flags: ``dense_tp``
    and ``ep`` default to the whole TP group, ``moe`` is ``"tp"`` or
    ``"a2a"``, ``reduction`` one of ``"ar"``, ``"rs"``, ``"rsv"``,
    ``"rs+rsv"``, ``pp_split`` the layers of each pipeline rank, ``layers``
    keeps only the model's first layers. Raises :class:`BadInput` naming the
    stage and rule for what seam cannot bind.
    """
    name, config = _model_args(model)
    cfg = _config(tp, attn_dp, dense_tp, ep, moe, reduction, input_scattered, dp_lm_head, pp, pp_split)
    n = 0 if layers is None else _int("layers", layers, 1)
    return Plan(_seam.bind(name, config, n, cfg, act_dtype, dispatch_dtype))


def plan_for_engine(engine: str, args: Sequence[str], *, layers: int | None = None) -> Plan:
    """The plan an engine's own command line implies (``seam plan --engine``).

    ``engine`` is ``"sglang"`` or ``"vllm"``; ``args`` its launcher's flags,
    e.g. ``["--model-path", "configs/deepseek-v2-lite.json", "--tp-size", "8",
    "--enable-dp-attention", "--dp-size", "4"]``. Flags the engine would
    refuse at start-up raise :class:`BadInput` naming the engine; the plan's
    ``engine`` says how seam read them.
    """
    if isinstance(args, str):
        raise BadInput("args is the engine's command line as a list of strings, not one string")
    n = 0 if layers is None else _int("layers", layers, 1)
    native, info = _seam.bind_engine(str(engine), [str(a) for a in args], n)
    reading = EngineReading(engine=info["engine"], hf_config=info["hf_config"], seam_flags=info["seam_flags"],
                            replicas=info["replicas"], notes=tuple(info["notes"]), ignored=tuple(info["ignored"]))
    return Plan(native, reading)


def load(path: str | os.PathLike[str]) -> Plan:
    """Reads a plan file (JSON or the text form) without verifying it."""
    return Plan.load(path)


def verify(plan: Plan, *, against_binder: bool = False) -> None:
    """Checks the plan's invariants (and with ``against_binder``, that it is
    the plan seam binds for its stages and configuration, as ``seam show``
    does). Raises :class:`CheckFailed` listing each violation."""
    if not isinstance(plan, Plan):
        raise BadInput(f"verify takes a seam.Plan, not {type(plan).__name__}")
    broken = [v["text"] for v in _seam.verify(plan._native)]
    if broken:
        raise CheckFailed("the plan breaks its invariants:\n" + "\n".join(broken), violations=broken)
    if against_binder:
        differ = list(_seam.compare_with_binder(plan._native))
        if differ:
            raise CheckFailed("the plan is not the plan seam binds for its stages and configuration (plan != "
                              "seam):\n" + "\n".join(differ), violations=differ)


def diff(first: Plan, second: Plan) -> list[str]:
    """The differences between two plans, one line each (empty when equal)."""
    if not isinstance(first, Plan) or not isinstance(second, Plan):
        raise BadInput("diff takes two seam.Plan values")
    return list(_seam.diff(first._native, second._native))


@dataclass(frozen=True)
class Candidate:
    """One configuration of a comparison, with what its collectives cost on
    the busiest rank and the memory of the fullest."""

    rank: int
    flags: str
    replicas: int
    config: Config
    decode_seconds: float
    pipeline_seconds: float
    prefill_seconds_per_token: float
    bytes_per_token: float
    network_bytes_per_token: float
    busiest_pp_rank: int
    weight_bytes_per_gpu: float
    cache_bytes_per_gpu: float
    fits: bool


@dataclass(frozen=True)
class Comparison:
    """Every configuration that binds, best first; ``rejected`` counts the
    rest by reason; ``merged`` those binding the same steps as a narrower
    reduction."""

    model: str
    hardware: str
    ranked: tuple[Candidate, ...]
    rejected: Mapping[str, int]
    considered: int
    merged: int


def compare(model: str | os.PathLike[str], *, gpus: int, nodes: int = 1, hardware: str = "h100", batch: int = 64,
            prefill: int = 4096, context: int = 4096, weight_dtype: str = "bf16", act_dtype: str = "bf16",
            dispatch_dtype: str | None = None, layers: int | None = None, max_seconds: float = 600) -> Comparison:
    """Every configuration of ``model`` on ``gpus`` GPUs over ``nodes`` nodes,
    bound, verified and ranked by communication time (``seam compare``)."""
    from ._plan import _config as config_of

    name, config = _model_args(model)
    a = _seam.CompareArgs()
    a.gpus, a.nodes = _int("gpus", gpus, 1), _int("nodes", nodes, 1)
    a.batch, a.prefill, a.context = _int("batch", batch, 1), _int("prefill", prefill, 1), _int("context", context, 1)
    a.hardware, a.weight_dtype, a.act_dtype = str(hardware), str(weight_dtype), str(act_dtype)
    a.dispatch_dtype = None if dispatch_dtype is None else str(dispatch_dtype)
    a.max_seconds = float(max_seconds)
    n = 0 if layers is None else _int("layers", layers, 1)
    d = _seam.compare(name, config, n, a)
    ranked = []
    for text in d["ranked"]:
        c = json.loads(text)
        c["config"] = config_of(c["config"])
        ranked.append(Candidate(**c))
    return Comparison(model=d["model"], hardware=d["hardware"], ranked=tuple(ranked), rejected=dict(d["rejected"]),
                      considered=d["considered"], merged=d["merged"])


@dataclass(frozen=True)
class RunResult:
    """A run's outputs and its unsharded reference's, as numpy float32 arrays
    of one row per token in batch order: the final hidden states and the LM
    head's logits. ``identical`` is true when both agree bit for bit."""

    hidden: Any
    reference: Any
    logits: Any
    reference_logits: Any
    identical: bool
    seconds: float
    ranks: tuple[Mapping[str, int], ...]
    dtype: str


def run(model: str | os.PathLike[str], *, tp: int = 1, attn_dp: int = 1, dense_tp: int | None = None,
        ep: int | None = None, moe: str = "tp", reduction: str = "ar", input_scattered: bool = False,
        dp_lm_head: bool = False, pp: int | None = None, pp_split: Sequence[int] | None = None,
        layers: int | None = None, tokens: int = 32, requests: int = 4, dtype: str = "fp32", seed: int = 1,
        timeout: float = 60, max_memory: int = 0, max_seconds: float = 600) -> RunResult:
    """Runs the model's plans on one thread per rank, with weights and a batch
    drawn from ``seed``, and the unsharded reference on the same weights
    (``seam run``). ``dtype`` is ``"fp32"`` or ``"bf16"``. Refuses (BadInput)
    a run larger than ``max_memory`` bytes (0: what the system has free) or
    whose attention alone would take more than ``max_seconds``; raises
    :class:`CheckFailed` when an output holds a NaN or an infinity (nothing
    was computed to compare), whatever it equals."""
    name, config = _model_args(model)
    cfg = _config(tp, attn_dp, dense_tp, ep, moe, reduction, input_scattered, dp_lm_head, pp, pp_split)
    a = _seam.RunArgs()
    a.tokens, a.requests = _int("tokens", tokens, 1), _int("requests", requests, 1)
    a.dtype = str(dtype)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        raise BadInput(f"seed={seed!r} must be an int in [0, 2**64)")
    a.seed = seed
    a.timeout, a.max_seconds = float(timeout), float(max_seconds)
    if isinstance(max_memory, bool) or not isinstance(max_memory, int) or not 0 <= max_memory < 1 << 63:
        raise BadInput(f"max_memory={max_memory!r} must be an int of bytes in [0, 2**63)")
    a.max_memory = max_memory
    n = 0 if layers is None else _int("layers", layers, 1)
    d = _seam.run(name, config, n, cfg, a)
    return RunResult(hidden=d["hidden"], reference=d["reference"], logits=d["logits"],
                     reference_logits=d["reference_logits"], identical=d["identical"], seconds=d["seconds"],
                     ranks=tuple(d["ranks"]), dtype=d["dtype"])
