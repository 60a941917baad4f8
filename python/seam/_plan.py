"""A bound plan as Python values.

A :class:`Plan` holds every pipeline rank's plan. Its values mirror the
plan's JSON (``docs/schemas/plan.schema.json``) field for field: a
:class:`Rank` per pipeline rank, a :class:`Line` per batch variant, a
:class:`Stage` per stage with its ``entry``, ``compute`` and ``exit``
:class:`Step` s, and the line's :class:`End`. Every value is frozen; the plan
behind them is seam's own, so printing, verifying and diffing work on
exactly what was bound.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from typing import Any, Iterator, Mapping

from . import _args, _seam

# Which step kinds move data between ranks, from seam's own table of kinds.
_COLLECTIVE: Mapping[str, bool] = _seam.step_kinds()


@dataclass(frozen=True)
class Step:
    """One step: ``kind`` (``"ar"``, ``"rs"``, ``"a2a-dispatch"``, ``"norm"``, ...)
    acting on ``operand`` over ``group`` (``None`` for local work), taking the
    rows from ``rows[0]`` to ``rows[1]`` and the owed sum from ``owes[0]`` to
    ``owes[1]`` (``"-"``: nothing owed)."""

    kind: str
    operand: str
    group: str | None
    rows: tuple[str, str]
    owes: tuple[str, str]
    width: int
    bytes_per_token: float

    @property
    def is_collective(self) -> bool:
        """Whether the step moves data between ranks (a collective or a send)."""
        return _COLLECTIVE[self.kind]

    def __str__(self) -> str:
        kind = f"{self.kind}({self.group})" if self.group else self.kind
        rows = self.rows[0] if self.rows[0] == self.rows[1] else f"{self.rows[0]}->{self.rows[1]}"
        return f"{kind} {self.operand} {rows}"


@dataclass(frozen=True)
class ValueFacts:
    """The value crossing a boundary: its rows, the sum it still owes
    (``"-"``: none) and how it updates the residual."""

    rows: str
    owes: str
    update: str


@dataclass(frozen=True)
class Boundary:
    """What crosses a boundary: the value (``None``: a written stream) and the
    residual's rows (``None``: the stack entry, before any residual)."""

    value: ValueFacts | None
    residual: str | None


@dataclass(frozen=True)
class Stage:
    """One stage of the stack on this rank, with its declaration ``decl``."""

    index: int
    layer: int
    kind: str
    decl: Mapping[str, Any] = field(compare=True, hash=False)
    arrives: Boundary
    input: str | None
    residual: str | None
    entry: tuple[Step, ...]
    compute: tuple[Step, ...]
    exit: tuple[Step, ...]
    departs: Boundary

    @property
    def steps(self) -> tuple[Step, ...]:
        """Entry, compute and exit steps in the order they run."""
        return self.entry + self.compute + self.exit

    @property
    def collectives(self) -> tuple[Step, ...]:
        """The steps that move data, in order."""
        return tuple(s for s in self.steps if s.is_collective)


@dataclass(frozen=True)
class End:
    """The end of a rank's line: ``kind`` ``"final"`` (the final norm, then
    the LM head's ``head`` steps) or ``"send"`` (the handoff to the next
    pipeline rank)."""

    kind: str
    arrives: Boundary
    steps: tuple[Step, ...]
    head: tuple[Step, ...]


@dataclass(frozen=True)
class Line:
    """The plan of one batch variant (``"ordinary"``, ``"input-scattered"``):
    the ``start`` (the embedding, or the receive from the previous pipeline
    rank), the stages, and the ``end``."""

    variant: str
    start: tuple[Step, ...]
    stages: tuple[Stage, ...]
    end: End
    bytes_per_token: float

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every step of the line in the order it runs."""
        out = self.start
        for s in self.stages:
            out += s.steps
        return out + self.end.steps + self.end.head


@dataclass(frozen=True)
class Config:
    """The parallel configuration, resolved (``dense_tp`` and ``ep`` as sizes)."""

    tp: int
    attn_dp: int
    cp: int
    dcp: int
    dense_tp: int
    ep: int
    moe: str
    reduction: str
    input_scattered: bool
    dp_lm_head: bool
    pp: int
    pp_split: tuple[int, ...]

    @property
    def attn_tp(self) -> int:
        """The attention-TP group's size: ``tp // (attn_dp * cp)``."""
        return self.tp // (self.attn_dp * self.cp)


@dataclass(frozen=True)
class Rank:
    """One pipeline rank's plan: layers ``layers[0]`` to ``layers[1] - 1``."""

    pp_rank: int
    model: str
    hidden: int
    vocab: int
    residual_streams: int
    act_dtype: str
    dispatch_dtype: str
    layers: tuple[int, int]
    config: Config
    lines: tuple[Line, ...]

    def line(self, variant: str = "ordinary") -> Line:
        """The line of a batch variant; KeyError when the plan has none."""
        for line in self.lines:
            if line.variant == variant:
                return line
        raise KeyError(f"pipeline rank {self.pp_rank} has no {variant!r} line "
                       f"(it has {', '.join(l.variant for l in self.lines)})")

    def bytes_per_token(self, variant: str = "ordinary") -> float:
        """The bytes a token moves on each GPU of this rank, over its whole line."""
        return self.line(variant).bytes_per_token


@dataclass(frozen=True)
class EngineReading:
    """How seam read an engine's command line: the same configuration as
    seam's flags, the copies of the pipeline the engine runs side by side,
    how its sizes map onto seam's, and what was read past."""

    engine: str
    hf_config: str
    seam_flags: str
    replicas: int
    notes: tuple[str, ...]
    ignored: tuple[str, ...]


def _step(d: Mapping[str, Any]) -> Step:
    return Step(kind=d["step"], operand=d["operand"], group=d["group"], rows=tuple(d["rows"]),
                owes=tuple(d["owes"]), width=d["width"], bytes_per_token=d["bytes_per_token"])


def _steps(items: list[Mapping[str, Any]]) -> tuple[Step, ...]:
    return tuple(_step(d) for d in items)


def _boundary(d: Mapping[str, Any]) -> Boundary:
    v = d["value"]
    return Boundary(value=None if v is None else ValueFacts(v["rows"], v["owes"], v["update"]),
                    residual=d["residual"])


def _stage(d: Mapping[str, Any]) -> Stage:
    return Stage(index=d["index"], layer=d["layer"], kind=d["decl"]["kind"], decl=dict(d["decl"]),
                 arrives=_boundary(d["arrives"]), input=d["input"], residual=d["residual"],
                 entry=_steps(d["entry"]), compute=_steps(d["compute"]), exit=_steps(d["exit"]),
                 departs=_boundary(d["departs"]))


def _line(d: Mapping[str, Any]) -> Line:
    e = d["end"]
    end = End(kind=e["kind"], arrives=_boundary(e["arrives"]), steps=_steps(e["steps"]), head=_steps(e["head"]))
    return Line(variant=d["variant"], start=_steps(d["start"]), stages=tuple(_stage(s) for s in d["stages"]),
                end=end, bytes_per_token=d["bytes_per_token"])


def _config(d: Mapping[str, Any]) -> Config:
    # Config's fields are the JSON config's keys (a test holds them to the knob table).
    return Config(**{f.name: tuple(d[f.name]) if isinstance(d[f.name], list) else d[f.name] for f in fields(Config)})


def _rank(d: Mapping[str, Any]) -> Rank:
    return Rank(pp_rank=d["pp_rank"], model=d["model"], hidden=d["hidden"], vocab=d["vocab"],
                residual_streams=d["residual_streams"], act_dtype=d["act_dtype"],
                dispatch_dtype=d["dispatch_dtype"], layers=tuple(d["layers"]), config=_config(d["config"]),
                lines=tuple(_line(l) for l in d["lines"]))


class Plan:
    """Every pipeline rank's bound plan (immutable).

    >>> p = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a")
    >>> [str(s) for s in p.ranks[0].line().stages[1].collectives]
    ['rs(attn_tp) value attn->slice']
    """

    __slots__ = ("_native", "_ranks", "engine")

    def __init__(self, native: _seam.Plans, engine: EngineReading | None = None) -> None:
        self._native = native
        self._ranks: tuple[Rank, ...] | None = None
        self.engine = engine

    @property
    def ranks(self) -> tuple[Rank, ...]:
        """One :class:`Rank` per pipeline rank, in order."""
        if self._ranks is None:
            self._ranks = tuple(_rank(r) for r in json.loads(self._native.to_json())["ranks"])
        return self._ranks

    def __iter__(self) -> Iterator[Rank]:
        return iter(self.ranks)

    def __len__(self) -> int:
        return len(self._native)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and self._native == other._native

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        r = self.ranks[0]
        return f"<seam.Plan {r.model} tp={r.config.tp} attn_dp={r.config.attn_dp} pp={len(self)}>"

    def to_json(self) -> str:
        """The plan as JSON (``docs/schemas/plan.schema.json``); reads back equal."""
        return self._native.to_json()

    def to_text(self) -> str:
        """The compact text form ``seam show`` reads; reads back equal."""
        return self._native.to_text()

    def table(self) -> str:
        """The table ``seam plan`` prints."""
        return self._native.table()

    def dot(self) -> str:
        """A Graphviz dot graph of the plan."""
        return self._native.dot()

    def bytes_per_token(self, variant: str = "ordinary") -> float:
        """The bytes one token moves on each GPU, summed over the pipeline's
        ranks (each rank's line as its table counts it)."""
        return sum(r.bytes_per_token(variant) for r in self.ranks)

    @staticmethod
    def from_json(text: str) -> Plan:
        """Reads a plan's JSON (without verifying it); seam.BadInput if malformed."""
        return Plan(_seam.read_plan(_args.text("text", text), "plan"))

    @staticmethod
    def from_text(text: str) -> Plan:
        """Reads the compact text form (without verifying it)."""
        return Plan(_seam.read_plan(_args.text("text", text), "plan"))

    @staticmethod
    def load(path: str | bytes | os.PathLike[str]) -> Plan:
        """Reads a plan file, JSON or text, as ``seam show`` does (without verifying it)."""
        return Plan(_seam.load_plan(_args.path("path", path)))
