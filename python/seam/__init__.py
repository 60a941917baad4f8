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

import json as _json
import os as _os
import re as _re
from dataclasses import dataclass as _dataclass
from typing import Any as _Any, Iterator as _Iterator, Mapping as _Mapping, Sequence as _Sequence

from . import _args, _seam
from ._errors import BadInput, CheckFailed, Deadline, Error, InternalError
from ._plan import (Boundary, Config, End, EngineReading, Line, Plan, Rank, Stage, Step, ValueFacts)

__version__: str = _seam.__version__

__all__ = [
    "__version__", "models", "Model", "plan", "plan_for_engine", "load", "verify", "diff", "PlanDiff", "Difference",
    "BytesChange", "compare", "compare_for_engine", "Comparison", "Candidate", "EngineRank", "Targets", "run",
    "RunResult", "generate", "Generation",
    "Plan", "Rank", "Line", "Stage", "Step", "End", "Boundary", "ValueFacts", "Config", "EngineReading", "Error",
    "BadInput", "CheckFailed", "Deadline", "InternalError",
]


def __dir__() -> list[str]:
    """The API (``__all__``) and the module's own dunders, nothing it imports."""
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__") and n.endswith("__")})


@_dataclass(frozen=True)
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
    return [Model(**_json.loads(m)) for m in _seam.models()]


def _model_args(model: str | _os.PathLike[str]) -> tuple[str, bytes]:
    """(catalogue name, config path): a path-like, a name ending in .json or
    one holding a path separator is a Hugging Face config.json."""
    if isinstance(model, _os.PathLike):
        return "", _args.path("model", model)
    if not isinstance(model, str):
        raise BadInput(f"model must be a catalogue name or a config.json path, not {type(model).__name__}")
    if model.endswith(".json") or _os.sep in model or "/" in model:
        return "", _args.path("model", model)
    return _args.text("model", model), b""


# The command line's words for what its flags take (seam plan --help).
_PP_SPLIT = "is not a list of layer counts like 1+3 or 2,2 (each from 1 to 100000)"

# The parallel configuration's knobs (seam/knobs.h): each is a keyword of
# plan and run, checked here by its kind as the command line checks its flag.
_KNOBS = _seam.knobs()


def _config(args: _Mapping[str, _Any]) -> dict[str, _Any]:
    """The knobs' keywords among a call's arguments (its ``locals()``), by the
    table's names; None where a keyword defaulting to None was not given."""
    return {k["name"]: _knob(k, args[k["name"]]) for k in _KNOBS}


def _knob(knob: _Mapping[str, _Any], value: _Any) -> _Any:
    name, kind = knob["name"], knob["kind"]
    if value is None and knob["default"] is None:
        return None
    if kind == "count":
        return _args.integer(name, value, 1)
    if kind == "bool":
        return bool(value)
    if kind == "enum":
        return _args.text(name, value)
    if isinstance(value, (str, bytes)) or not isinstance(value, _Sequence):
        raise BadInput(f"{name}={value!r} {_PP_SPLIT}: give a list of ints, e.g. [1, 3]")
    if not value:
        raise BadInput(f"{name}=[] {_PP_SPLIT}: give None for an even split")
    return [_args.integer(name, n, 1) for n in value]


def _dtype(name: str, value: str | None) -> str | None:
    return None if value is None else _args.text(name, value)


def plan(model: str | _os.PathLike[str], *, tp: int = 1, attn_dp: int = 1, cp: int = 1, dcp: int = 1,
         dense_tp: int | None = None, ep: int | None = None, moe: str = "tp", reduction: str = "ar",
         input_scattered: bool = False, dp_lm_head: bool = False, pp: int | None = None,
         pp_split: _Sequence[int] | None = None,
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
    cfg = _config(locals())
    name, config = _model_args(model)
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    return Plan(_seam.bind(name, config, n, cfg, _args.text("act_dtype", act_dtype),
                           _dtype("dispatch_dtype", dispatch_dtype)))


def plan_for_engine(engine: str, args: _Sequence[str], *, layers: int | None = None) -> Plan:
    """The plan an engine's own command line implies (``seam plan --engine``).

    ``engine`` is ``"sglang"`` or ``"vllm"``; ``args`` its launcher's flags,
    e.g. ``["--model-path", "configs/deepseek-v2-lite.json", "--tp-size", "8",
    "--enable-dp-attention", "--dp-size", "4"]``. Flags the engine would
    refuse at start-up raise :class:`BadInput` naming the engine; the plan's
    ``engine`` says how seam read them.
    """
    if isinstance(args, str):
        raise BadInput("args is the engine's command line as a list of strings, not one string")
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    native, info = _seam.bind_engine(_args.text("engine", engine), _args.strings("args", args), n)
    reading = EngineReading(engine=info["engine"], hf_config=info["hf_config"], seam_flags=info["seam_flags"],
                            replicas=info["replicas"], notes=tuple(info["notes"]), ignored=tuple(info["ignored"]))
    return Plan(native, reading)


def load(path: str | bytes | _os.PathLike[str]) -> Plan:
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


@_dataclass(frozen=True)
class Difference:
    """One difference between two plans: ``kind`` is ``"removed"`` (only the
    first plan has it: a step, a stage, a batch line), ``"added"`` (only the
    second has it), ``"changed"`` (a step at the same place differs) or
    ``"field"`` (a value of the header, a stage or a boundary differs);
    ``where`` names the place (``"ordinary stage 1 entry[0]"``, ``"config"``),
    ``first`` and ``second`` what each plan has there (``None``: nothing),
    ``rank`` the pipeline rank (``None`` for a one-rank plan or the pipeline
    itself). ``str()`` is the line ``seam diff`` prints."""

    kind: str
    where: str
    first: str | None
    second: str | None
    rank: int | None
    text: str

    def __str__(self) -> str:
        return self.text


@_dataclass(frozen=True)
class BytesChange:
    """The bytes one token moves on a batch line (``variant``: ``"ordinary"``
    or ``"input-scattered"``), in the first plan and in the second: of one
    pipeline rank (``rank``), or of them all (``rank`` ``None``). ``str()`` is
    the line ``seam diff`` prints."""

    variant: str
    rank: int | None
    first: float
    second: float
    text: str

    def __str__(self) -> str:
        return self.text


@_dataclass(frozen=True)
class PlanDiff:
    """What :func:`diff` finds: the ``differences`` one by one, the change
    in ``bytes`` per token (empty when the plans are equal), and ``lines``,
    every line ``seam diff`` prints for them (differences, then bytes).
    Iterating, indexing and ``len`` go over ``differences``; a ``PlanDiff``
    is false when the plans are equal."""

    differences: tuple[Difference, ...]
    bytes: tuple[BytesChange, ...]
    lines: tuple[str, ...]

    @property
    def equal(self) -> bool:
        """Whether the plans are equal."""
        return not self.lines

    def __bool__(self) -> bool:
        return bool(self.lines)

    def __len__(self) -> int:
        return len(self.differences)

    def __iter__(self) -> _Iterator[Difference]:
        return iter(self.differences)

    def __getitem__(self, i: int) -> Difference:
        return self.differences[i]

    def __str__(self) -> str:
        return "\n".join(self.lines)


_RANK = _re.compile(r"rank (\d+): (.*)", _re.S)
_BYTES = _re.compile(r"(total )?bytes/token \(([\w+-]+)\): (\S+) -> (\S+) \(.*\)", _re.S)
_STAGE = _re.compile(r"([-+]) (\S+ stage \d+) \((.*)", _re.S)
_STEP = _re.compile(r"([-+~]) ([^:]*\[[\d>-]+\]): (.*)", _re.S)
_ONLY = _re.compile(r"only the (first|second) plan has (\S+) batches")
_DECLARED = _re.compile(r"(.*) declaration differs: (\w+)=(.*) vs \2=(.*)", _re.S)


def _difference(line: str) -> Difference | BytesChange:
    """One line of seam's diff as a record (seam diff prints the same lines)."""
    rank = None
    body = line
    m = _RANK.fullmatch(line)
    if m:
        rank, body = int(m.group(1)), m.group(2)
    m = _BYTES.fullmatch(body)
    if m:
        return BytesChange(variant=m.group(2), rank=None if m.group(1) else rank, first=float(m.group(3)),
                           second=float(m.group(4)), text=line)
    m = _STAGE.fullmatch(body)
    if m:
        summary = "(" + m.group(3)
        removed = m.group(1) == "-"
        return Difference("removed" if removed else "added", m.group(2), summary if removed else None,
                          None if removed else summary, rank, line)
    m = _STEP.fullmatch(body)
    if m:
        sign, where, rest = m.groups()
        if sign == "~":
            first, _, second = rest.partition(" != ")
            return Difference("changed", where, first, second, rank, line)
        return Difference("removed" if sign == "-" else "added", where, rest if sign == "-" else None,
                          None if sign == "-" else rest, rank, line)
    m = _ONLY.fullmatch(body)
    if m:
        batches = f"{m.group(2)} batches"
        first = m.group(1) == "first"
        return Difference("removed" if first else "added", m.group(2), batches if first else None,
                          None if first else batches, rank, line)
    m = _DECLARED.fullmatch(body)
    if m:
        return Difference("field", f"{m.group(1)} declaration {m.group(2)}", m.group(3), m.group(4), rank, line)
    where, _, values = body.partition(": ")
    first, sep, second = values.partition(" != ")
    if not sep:
        return Difference("field", body, None, None, rank, line)
    return Difference("field", where, first, second, rank, line)


def diff(first: Plan, second: Plan) -> PlanDiff:
    """The differences between two plans as ``seam diff`` finds them: a
    :class:`PlanDiff` of :class:`Difference` records and the change in
    :class:`BytesChange` per token, with ``lines``, the lines ``seam diff``
    prints (none when the plans are equal)."""
    if not isinstance(first, Plan) or not isinstance(second, Plan):
        raise BadInput("diff takes two seam.Plan values")
    lines = tuple(_seam.diff(first._native, second._native))
    records = [_difference(line) for line in lines]
    return PlanDiff(differences=tuple(r for r in records if isinstance(r, Difference)),
                    bytes=tuple(r for r in records if isinstance(r, BytesChange)), lines=lines)


@_dataclass(frozen=True)
class Candidate:
    """One configuration of a comparison: the output tokens a GPU makes a
    second and a decode step end to end (compute, memory traffic and
    collectives through the pipeline), what its collectives cost on the
    busiest rank, and the memory of the fullest. ``batch`` is the sequences
    it runs (the comparison's, or its best where ``Comparison.best_batch``),
    ``step_seconds`` a decode step, ``tpot_seconds`` the time between a
    request's tokens (the step and its share of the prefills), ``ttft_seconds``
    a prompt's prefill, and ``meets`` whether both are within the targets.
    A pipeline decodes ``micro_batches`` micro-batches at once;
    ``overlapped``: each as two halves whose all-to-alls run behind the
    other's compute (two-batch overlap)."""

    rank: int
    flags: str
    replicas: int
    config: Config
    batch: int
    micro_batches: int
    overlapped: bool
    tokens_per_gpu: float
    step_seconds: float
    tpot_seconds: float
    ttft_seconds: float
    meets: bool
    decode_seconds: float
    pipeline_seconds: float
    prefill_seconds_per_token: float
    bytes_per_token: float
    network_bytes_per_token: float
    busiest_pp_rank: int
    weight_bytes_per_gpu: float
    cache_bytes_per_gpu: float
    state_bytes_per_gpu: float
    usable_bytes_per_gpu: float
    fits: bool


@_dataclass(frozen=True)
class EngineRank:
    """Where an engine's own configuration ranks in a comparison
    (:func:`compare_for_engine`): the engine, its configuration as seam's
    flags, its replicas, and its rank (1 = best; ``None``: it is not among
    the configurations of these GPUs)."""

    name: str
    flags: str
    replicas: int
    rank: int | None


@_dataclass(frozen=True)
class Targets:
    """What a deployment must meet (``seam compare``'s ``--ttft``, ``--tpot``
    and ``--osl``): the time to a request's first token and between its
    tokens, in seconds (0: no target), for requests of ``osl`` output tokens
    (0: decode only, no prefill charged)."""

    ttft_seconds: float = 0.0
    tpot_seconds: float = 0.0
    osl: int = 0


@_dataclass(frozen=True)
class Comparison:
    """Every configuration that binds on ``gpus`` GPUs, best first;
    ``rejected`` counts the rest by reason; ``merged`` those binding the same
    steps as a narrower reduction; ``engine`` where an engine's own
    configuration ranks (``None`` without one). The workload is the one
    ``seam compare --format json`` reports: ``batch`` sequences a decode
    step (unused where ``best_batch``: each candidate runs its own best),
    ``prefill`` tokens a prompt, ``context`` tokens each sequence caches,
    and the ``targets``; the ``objective`` the ranking serves; with
    ``pareto``, the ``frontier``: every candidate at every batch it holds
    within the targets that no other beats on both output tokens a second
    per GPU and per user, the fastest for a user first (``None`` without)."""

    model: str
    hardware: str
    ranked: tuple[Candidate, ...]
    rejected: _Mapping[str, int]
    considered: int
    merged: int
    gpus: int = 0
    engine: EngineRank | None = None
    batch: int = 64
    prefill: int = 4096
    context: int = 4096
    best_batch: bool = False
    targets: Targets = Targets()
    objective: str = "throughput"
    frontier: tuple[Candidate, ...] | None = None


def _count(name: str, value: object) -> int | None:
    return None if value is None else _args.integer(name, value, 1)


def _millis(name: str, value: object) -> float | None:
    return None if value is None else _args.millis(name, value)


def _compare_args(gpus: int | None, nodes: int, hardware: str, workload: _Mapping[str, _Any], weight_dtype: str,
                  act_dtype: str, dispatch_dtype: str | None, max_seconds: float, objective: str = "throughput",
                  pareto: bool = False) -> _Any:
    """The native module's arguments; ``workload`` holds the keywords batch,
    prefill, context, isl, osl, ttft_ms and tpot_ms (None: not given), which
    the native module makes the workload as ``seam compare`` makes it."""
    a = _seam.CompareArgs()
    a.gpus = 0 if gpus is None else _args.integer("gpus", gpus, 1)
    a.nodes = _args.integer("nodes", nodes, 1)
    for name in ("batch", "prefill", "context", "isl", "osl"):
        setattr(a, name, _count(name, workload[name]))
    a.ttft_ms, a.tpot_ms = _millis("ttft_ms", workload["ttft_ms"]), _millis("tpot_ms", workload["tpot_ms"])
    # A name of the built-in hardware, or a JSON file as seam compare --hardware reads it.
    is_path = isinstance(hardware, (_os.PathLike, bytes)) or (
        isinstance(hardware, str) and ("/" in hardware or hardware.endswith(".json")))
    a.hardware = _args.path("hardware", hardware) if is_path else _args.text("hardware", hardware)
    a.weight_dtype, a.act_dtype = _args.text("weight_dtype", weight_dtype), _args.text("act_dtype", act_dtype)
    a.dispatch_dtype = _dtype("dispatch_dtype", dispatch_dtype)
    a.max_seconds = _args.seconds("max_seconds", max_seconds)
    a.objective = _args.text("objective", objective)
    if not isinstance(pareto, bool):
        raise BadInput(f"pareto must be True or False, not {type(pareto).__name__}")
    a.pareto = pareto
    return a


def _comparison(d: _Mapping[str, _Any]) -> Comparison:
    from ._plan import _config as config_of

    def candidate(text: str) -> Candidate:
        c = _json.loads(text)
        c["config"] = config_of(c["config"])
        return Candidate(**c)

    ranked = [candidate(text) for text in d["ranked"]]
    frontier = None if d["frontier"] is None else tuple(candidate(text) for text in d["frontier"])
    engine = None if d["engine"] is None else EngineRank(**d["engine"])
    return Comparison(model=d["model"], hardware=d["hardware"], ranked=tuple(ranked), rejected=dict(d["rejected"]),
                      considered=d["considered"], merged=d["merged"], gpus=d["gpus"], engine=engine,
                      batch=d["batch"], prefill=d["prefill"], context=d["context"], best_batch=d["best_batch"],
                      targets=Targets(**d["targets"]), objective=d["objective"], frontier=frontier)


# The workload's keywords of compare and compare_for_engine (seam compare's
# --batch, --prefill, --context, --isl, --osl, --ttft and --tpot).
_WORKLOAD = ("batch", "prefill", "context", "isl", "osl", "ttft_ms", "tpot_ms")


def compare(model: str | _os.PathLike[str], *, gpus: int | None = None, nodes: int = 1,
            hardware: str | _os.PathLike[str] = "h100", batch: int | None = None, prefill: int | None = None,
            context: int | None = None, isl: int | None = None, osl: int | None = None, ttft_ms: float | None = None,
            tpot_ms: float | None = None, weight_dtype: str = "bf16", act_dtype: str = "bf16",
            dispatch_dtype: str | None = None, layers: int | None = None, max_seconds: float = 600,
            objective: str = "throughput", pareto: bool = False) -> Comparison:
    """Every configuration of ``model`` on ``gpus`` GPUs (default: every GPU
    of the ``nodes``) over ``nodes`` nodes, bound, verified and ranked as
    ``seam compare`` ranks them: those that fit in memory first, those
    within the targets next, then by output tokens per GPU. ``hardware`` is
    a name from hardware/ or a hardware JSON file; ``max_seconds`` refuses a
    comparison estimated to take longer (a number of seconds from 0.001 to
    86400).

    The workload is the command line's. ``batch`` sequences a decode step
    (default 64), ``prefill`` tokens a prompt (default 4096), ``context``
    tokens each sequence caches (default 4096); or a request's lengths:
    ``isl`` input tokens (its prefill) and ``osl`` output tokens (a sequence
    caches its input and, on average, half its output; each request's
    prefill is charged once per ``osl`` tokens); and latency targets
    ``ttft_ms`` (to the first token) and ``tpot_ms`` (between tokens), in
    milliseconds. With any of ``isl``, ``osl``, ``ttft_ms`` or ``tpot_ms``
    and no ``batch``, each configuration runs the batch that makes the most
    output tokens per GPU within its memory and the targets
    (``Comparison.best_batch``); a ``batch`` given is run as given. Counts
    are from 1 to 1048576, milliseconds above 0 and at most a day (86400000).
    As the command line refuses its flags together, ``batch`` excludes
    ``ttft_ms`` and ``tpot_ms``, ``prefill`` excludes ``isl``, and
    ``context`` excludes ``isl`` and ``osl``: each raises :class:`BadInput`.
    ``objective`` is ``"throughput"`` (output tokens a second per GPU),
    ``"latency"`` (per user: the shortest TPOT) or ``"ttft"``, each
    configuration at the batch that serves it best; ``pareto`` adds
    ``Comparison.frontier`` (``seam compare --objective``, ``--pareto``).
    """
    workload = {k: v for k, v in locals().items() if k in _WORKLOAD}
    name, config = _model_args(model)
    a = _compare_args(gpus, nodes, hardware, workload, weight_dtype, act_dtype, dispatch_dtype, max_seconds,
                      objective, pareto)
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    return _comparison(_seam.compare(name, config, n, a))


def compare_for_engine(engine: str, args: _Sequence[str], *, gpus: int | None = None, nodes: int = 1,
                       hardware: str | _os.PathLike[str] = "h100", batch: int | None = None,
                       prefill: int | None = None, context: int | None = None, isl: int | None = None,
                       osl: int | None = None, ttft_ms: float | None = None, tpot_ms: float | None = None,
                       weight_dtype: str = "bf16", act_dtype: str = "bf16", dispatch_dtype: str | None = None,
                       layers: int | None = None, max_seconds: float = 600, objective: str = "throughput",
                       pareto: bool = False) -> Comparison:
    """Every configuration of the model an engine's own command line names,
    ranked as :func:`compare` ranks them, and where the engine's own
    configuration ranks (``Comparison.engine``), as ``seam compare --engine
    sglang -- ARGS`` does. ``args`` are the launcher's flags, as
    :func:`plan_for_engine` takes them; ``gpus`` defaults to the GPUs the
    engine runs on (its world size times its replicas); the workload's
    keywords (``batch``, ``isl``, ``tpot_ms``, ...), ``objective`` and
    ``pareto`` are :func:`compare`'s."""
    workload = {k: v for k, v in locals().items() if k in _WORKLOAD}
    if isinstance(args, str):
        raise BadInput("args is the engine's command line as a list of strings, not one string")
    a = _compare_args(gpus, nodes, hardware, workload, weight_dtype, act_dtype, dispatch_dtype, max_seconds,
                      objective, pareto)
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    return _comparison(_seam.compare_engine(_args.text("engine", engine), _args.strings("args", args), n, a))


@_dataclass(frozen=True)
class RunResult:
    """A run's outputs and its unsharded reference's, as numpy float32 arrays
    of one row per token in batch order: the final hidden states and the LM
    head's logits. ``identical`` is true when both agree bit for bit."""

    hidden: _Any
    reference: _Any
    logits: _Any
    reference_logits: _Any
    identical: bool
    seconds: float
    ranks: tuple[_Mapping[str, int], ...]
    dtype: str


def _run_limits(a: _Any, dtype: str, seed: int, timeout: float, max_memory: int, max_seconds: float) -> None:
    """The dtype, seed and limits a run and a generation share, checked as
    their flags are."""
    a.dtype = _args.text("dtype", dtype)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        raise BadInput(f"seed={seed!r} must be an int in [0, 2**64)")
    a.seed = seed
    a.timeout, a.max_seconds = _args.seconds("timeout", timeout), _args.seconds("max_seconds", max_seconds)
    if isinstance(max_memory, bool) or not isinstance(max_memory, int) or not 0 <= max_memory < 1 << 63:
        raise BadInput(f"max_memory={max_memory!r} must be an int of bytes in [0, 2**63)")
    a.max_memory = max_memory


def run(model: str | _os.PathLike[str], *, tp: int = 1, attn_dp: int = 1, cp: int = 1, dcp: int = 1,
        dense_tp: int | None = None, ep: int | None = None, moe: str = "tp", reduction: str = "ar",
        input_scattered: bool = False, dp_lm_head: bool = False, pp: int | None = None,
        pp_split: _Sequence[int] | None = None,
        layers: int | None = None, tokens: int = 32, requests: int = 4, dtype: str = "fp32", seed: int = 1,
        timeout: float = 60, max_memory: int = 0, max_seconds: float = 600) -> RunResult:
    """Runs the model's plans on one thread per rank, with weights and a batch
    drawn from ``seed``, and the unsharded reference on the same weights
    (``seam run``). ``dtype`` is ``"fp32"`` or ``"bf16"``. Refuses (BadInput)
    a run larger than ``max_memory`` bytes (0: what the system has free) or
    whose attention alone would take more than ``max_seconds``; raises
    :class:`CheckFailed` when an output holds a NaN or an infinity (nothing
    was computed to compare), whatever it equals."""
    cfg = _config(locals())
    name, config = _model_args(model)
    a = _seam.RunArgs()
    a.tokens, a.requests = _args.integer("tokens", tokens, 1), _args.integer("requests", requests, 1)
    _run_limits(a, dtype, seed, timeout, max_memory, max_seconds)
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    d = _seam.run(name, config, n, cfg, a)
    return RunResult(hidden=d["hidden"], reference=d["reference"], logits=d["logits"],
                     reference_logits=d["reference_logits"], identical=d["identical"], seconds=d["seconds"],
                     ranks=tuple(d["ranks"]), dtype=d["dtype"])


@_dataclass(frozen=True)
class Generation:
    """A generation's tokens and outputs, and its teacher-forced reference's.
    ``tokens`` holds each request's generated tokens; ``groups`` the
    attention-DP group that served each. ``hidden``, ``logits``,
    ``reference`` and ``reference_logits`` are numpy float32 arrays of one row
    per token fed (each request's prompt, then each generated token but the
    last, request after request). ``identical`` is true when the generation
    and its reference agree bit for bit."""

    tokens: tuple[tuple[int, ...], ...]
    groups: tuple[int, ...]
    hidden: _Any
    logits: _Any
    reference: _Any
    reference_logits: _Any
    identical: bool
    steps: int
    peak_cache_bytes: int
    seconds: float
    ranks: tuple[_Mapping[str, int], ...]
    dtype: str


def generate(model: str | _os.PathLike[str], *, tp: int = 1, attn_dp: int = 1, cp: int = 1, dcp: int = 1,
             dense_tp: int | None = None, ep: int | None = None, moe: str = "tp", reduction: str = "ar",
             input_scattered: bool = False, dp_lm_head: bool = False, pp: int | None = None,
             pp_split: _Sequence[int] | None = None,
             layers: int | None = None, requests: int | _Sequence[_Sequence[int]] = 4, tokens: int = 32,
             output: int = 16, chunk: int | None = None, mixed: bool = False, dtype: str = "fp32",
             seed: int = 1, timeout: float = 60, max_memory: int = 0, max_seconds: float = 600) -> Generation:
    """Serves requests as ``seam run --generate`` does: each prompt prefilled
    (in chunks of ``chunk`` tokens), then ``output`` tokens decoded
    greedily, one a step (``mixed``: prefill chunks and decode tokens in the
    same step), on one thread per rank; and the unsharded reference over the
    final sequences. ``requests`` is a count that ``tokens`` prompt tokens
    are split into, or each request's ``(prompt, output)`` or
    ``(prompt, output, arrival)`` lengths. Refuses (BadInput) what
    ``seam run`` refuses; raises :class:`CheckFailed` when an output holds a
    NaN or an infinity."""
    cfg = _config(locals())
    name, config = _model_args(model)
    a = _seam.RunArgs()
    if isinstance(requests, int) and not isinstance(requests, bool):
        a.tokens, a.requests = _args.integer("tokens", tokens, 1), _args.integer("requests", requests, 1)
    elif isinstance(requests, (list, tuple)) and requests:
        lengths = []
        for i, r in enumerate(requests):
            if not isinstance(r, (list, tuple)) or len(r) not in (2, 3):
                raise BadInput(f"requests[{i}]={r!r} must be (prompt, output) or (prompt, output, arrival)")
            prompt = _args.integer(f"requests[{i}] prompt", r[0], 1)
            output = _args.integer(f"requests[{i}] output", r[1], 1)
            arrival = _args.integer(f"requests[{i}] arrival", r[2], 0) if len(r) == 3 else 0
            lengths.append((prompt, output, arrival))
        a.lengths = lengths
    else:
        raise BadInput(f"requests={requests!r} must be a count or a non-empty list of (prompt, output[, arrival])")
    a.generate = _args.integer("output", output, 1)
    a.chunk = 0 if chunk is None else _args.integer("chunk", chunk, 1)
    if not isinstance(mixed, bool):
        raise BadInput(f"mixed={mixed!r} must be a bool")
    a.mixed = mixed
    _run_limits(a, dtype, seed, timeout, max_memory, max_seconds)
    n = 0 if layers is None else _args.integer("layers", layers, 1)
    d = _seam.generate(name, config, n, cfg, a)
    return Generation(tokens=tuple(d["tokens"]), groups=tuple(d["groups"]), hidden=d["hidden"], logits=d["logits"],
                      reference=d["reference"], reference_logits=d["reference_logits"], identical=d["identical"],
                      steps=d["steps"], peak_cache_bytes=d["peak_cache_bytes"], seconds=d["seconds"],
                      ranks=tuple(d["ranks"]), dtype=d["dtype"])
