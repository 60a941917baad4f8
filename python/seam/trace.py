"""seam.trace: what a process calls in torch.distributed, as the JSON lines
seam reads (one object a call, ``include/seam/trace.h``), one file a process.

>>> import seam.trace
>>> seam.trace.install("/tmp/trace")                # wraps torch.distributed in place
>>> with seam.trace.tag("layer 3 exit"):
...     torch.distributed.all_reduce(x, group=tp)   # a line in /tmp/trace/seam-trace.<rank>.jsonl
>>> seam.trace.uninstall()                          # the original functions back

Each line is ``{"rank", "op", "group", "shape", "dtype"}`` with ``reduce``
(all_reduce, reduce_scatter, reduce), ``peer`` (broadcast's or reduce's root,
a send's or receive's other end) and ``tag`` where they apply. ``rank``,
``group`` and ``peer`` are global ranks, ``group`` in the group's own rank
order. ``shape`` is the buffer of all_reduce, broadcast and reduce; this
rank's part of all_gather (its input); the whole input of reduce_scatter;
everything this rank sends in all_to_all; the message of send and recv. A
list form (``all_gather``'s output list aside) is its tensors concatenated
along their first dimension (flattened where their other dimensions differ).

The wrapped calls are ``all_reduce``, ``all_gather_into_tensor`` (and
``_all_gather_base``), ``all_gather``, ``reduce_scatter_tensor`` (and
``_reduce_scatter_base``), ``reduce_scatter``, ``all_to_all_single``,
``all_to_all``, ``broadcast``, ``reduce``, ``send``, ``recv``, ``isend``,
``irecv`` and ``batch_isend_irecv`` (a line for each ``P2POp``), in both
``torch.distributed`` and ``torch.distributed.distributed_c10d``. A call is
written before it runs (a call that hangs is the rank's last line), each
line with one ``write`` of its own, so a process that dies leaves whole
lines. The wrapped function is called as it was and its result returned as
it was; a call made inside another traced call (``batch_isend_irecv``'s
``isend``, an engine's method below) is not written again. Calls torch makes
for itself inside a function not wrapped here (``broadcast_object_list``'s
broadcasts) are written as the collectives they are. Not written: a call on
a group this rank is not in (torch runs nothing), an ``irecv`` from any
source (its peer is known only when it completes; a ``recv`` from any source
is written when it returns, with the rank it came from), and, with
``cpu=False``, a call on CPU tensors (an engine's gloo control traffic).

Reductions are torch's ``SUM``, ``AVG``, ``MAX``, ``MIN`` and ``PRODUCT``
(``sum``, ``avg``, ``max``, ``min``, ``prod``); ``PREMUL_SUM`` is written as
``sum``, the sum of inputs each scaled first, which moves what a sum moves.
A reduction or a dtype seam does not read (``BAND``, ``complex64``, ...) is
written as torch names it, and seam refuses that line by its number.

Engines: vLLM and SGLang send most of their collectives through their
``GroupCoordinator`` and, for all-reduce, through custom all-reduce kernels,
pynccl or symmetric memory that torch.distributed never sees. With
``engine="vllm"`` or ``engine="sglang"`` the coordinator's methods are
wrapped as well (``all_reduce``, ``all_gather``, ``all_gatherv``,
``reduce_scatter``, ``reduce_scatterv``, ``reduce_scatter_tensor``,
``all_gather_into_tensor``, ``all_to_all_single``, ``broadcast``, ``send``,
``recv``, SGLang's ``fused_allreduce_rmsnorm``, and the methods the engines'
own custom ops call, which compiled graphs reach without the public ones),
each call written once with the coordinator's ``ranks``; the
torch.distributed call it makes inside is not written again. A coordinator
of one rank moves nothing and is not written. ``fused_allreduce_rmsnorm`` is
written when it returns a result (its all-reduce ran; ``None`` means the
engine falls back to ``all_reduce``, which is written then).

Inside a CUDA graph's replay no Python runs: the hook sees the eager calls
(prefill, and decode with SGLang's ``--disable-cuda-graph`` or vLLM's
``--enforce-eager``). A call made while its stream captures a graph is
written with its tag prefixed ``cuda graph capture``. Custom all-reduce
kernels are seen only through an engine's coordinator (``engine=``).

Worker processes are traced through ``sitecustomize``: with the folder
``python -m seam.trace --hook-dir`` prints on ``PYTHONPATH``, every Python
process started with ``SEAM_TRACE`` set installs the hook (see
:func:`install_from_env`)::

    PYTHONPATH=$(python3 -m seam.trace --hook-dir):$PYTHONPATH SEAM_TRACE=/tmp/t \\
        SEAM_TRACE_ENGINE=sglang python3 -m sglang.launch_server ...
"""
from __future__ import annotations

import argparse
import contextlib
import contextvars
import functools
import importlib.abc
import importlib.util
import inspect
import json
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping, Sequence

try:
    from ._errors import BadInput
except ImportError:  # loaded from its file by the sitecustomize hook, without the package

    class BadInput(ValueError):  # type: ignore[no-redef]
        """Bad input: a value seam.trace cannot take."""

        kind = "invalid-argument"
        exit_status = 2


__all__ = ["ENGINES", "MAX_TAG_BYTES", "install", "install_from_env", "uninstall", "tag", "set_tag", "get_tag",
           "hook_dir", "main"]

#: The engines whose ``GroupCoordinator`` ``install(engine=...)`` wraps.
ENGINES: tuple[str, ...] = ("vllm", "sglang")
#: The longest tag seam reads, in UTF-8 bytes; a longer one is cut there.
MAX_TAG_BYTES = 256

_ENGINE_MODULES = {"vllm": "vllm.distributed.parallel_state", "sglang": "sglang.srt.distributed.parallel_state"}
_CAPTURE = "cuda graph capture"
_MAX_RANKS = 65536  # seam's kMaxRanks

_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("seam_trace_tag", default="")


# ---- tags ---------------------------------------------------------------------------------------------------------

def _tag_text(text: object) -> str:
    if not isinstance(text, str):
        raise BadInput(f"a tag must be a str, not {type(text).__name__}")
    raw = text.encode("utf-8", "replace")  # a lone surrogate becomes '?'
    if len(raw) > MAX_TAG_BYTES:
        raw = raw[:MAX_TAG_BYTES]
    return raw.decode("utf-8", "ignore")  # a character cut at the end is dropped whole


@contextlib.contextmanager
def tag(text: str) -> Iterator[None]:
    """Tags the calls made inside the ``with`` block (or the decorated
    function) with ``text``, e.g. ``"layer 3 exit"``; the tag before it
    holds again after. A tag holds in the thread (and asyncio task) that set
    it; a text over :data:`MAX_TAG_BYTES` UTF-8 bytes is cut there."""
    token = _TAG.set(_tag_text(text))
    try:
        yield
    finally:
        _TAG.reset(token)


def set_tag(text: str | None) -> None:
    """Tags every later call of this thread with ``text`` (``None`` or
    ``""``: no tag), until the next :func:`set_tag` or the end of an
    enclosing :func:`tag` block."""
    _TAG.set("" if text is None else _tag_text(text))


def get_tag() -> str:
    """The tag this thread's calls are written with now (``""``: none)."""
    return _TAG.get()


# ---- the file -----------------------------------------------------------------------------------------------------

def _warn(message: str) -> None:
    """Says ``message`` once a process: tracing never stops the call it traces."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(f"seam.trace: {message}", RuntimeWarning, stacklevel=3)


_warned: set[str] = set()


class _Writer:
    """The process's file, opened at its first line: ``target`` with
    ``{rank}`` (and ``{pid}``) replaced, or ``<target>/seam-trace.<rank>.jsonl``.
    A file of that name already there is left alone: the lines go to the
    name with ``.<pid>`` before its ``.jsonl``."""

    def __init__(self, target: str, rank: int | None) -> None:
        self.target = target
        self.fixed_rank = rank
        self.lock = threading.Lock()
        self.fd = -1
        self.pid = -1
        self.rank = -1
        self.path: str | None = None
        self.broken = False

    def _name(self, rank: int) -> str:
        if "{rank}" in self.target or "{pid}" in self.target:
            return self.target.replace("{rank}", str(rank)).replace("{pid}", str(os.getpid()))
        return os.path.join(self.target, f"seam-trace.{rank}.jsonl")

    def open_for(self, rank_now: Callable[[], int]) -> int | None:
        """The rank the lines are written for, the file open (a forked
        process opens its own); ``None`` where it cannot be opened."""
        if self.fd >= 0 and self.pid == os.getpid():
            return self.rank
        with self.lock:
            if self.fd >= 0 and self.pid == os.getpid():
                return self.rank
            if self.broken:
                return None
            if self.fd >= 0:  # the parent's, inherited through fork
                with contextlib.suppress(OSError):
                    os.close(self.fd)
                self.fd = -1
            rank = self.fixed_rank if self.fixed_rank is not None else rank_now()
            path = self._name(rank)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
            try:
                parent = os.path.dirname(path)
                if parent:
                    os.makedirs(parent, exist_ok=True)
                try:
                    fd = os.open(path, flags, 0o644)
                except FileExistsError:
                    base, ext = os.path.splitext(path)
                    taken, path = path, f"{base}.{os.getpid()}{ext}"
                    fd = os.open(path, flags, 0o644)
                    _warn(f"{taken} is there already (another process of rank {rank}, or an earlier run): "
                          f"this process writes {path}")
            except OSError as e:
                self.broken = True
                _warn(f"cannot open the trace file {path}: {e}; this process is not traced")
                return None
            self.fd, self.pid, self.rank, self.path = fd, os.getpid(), rank, path
            return rank

    def write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
        except OSError as e:
            _warn(f"writing {self.path} failed: {e}")

    def close(self) -> None:
        with self.lock:
            if self.fd >= 0 and self.pid == os.getpid():
                with contextlib.suppress(OSError):
                    os.close(self.fd)
            self.fd = -1


# ---- what a call is -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Event:
    op: str
    group: list[int]
    shape: list[int]
    dtype: str
    reduce: str | None = None
    peer: int | None = None
    captured: bool = False


class _Args:
    """A call's arguments by parameter name, as the wrapped function's
    signature names them (positions or keywords, else its defaults)."""

    __slots__ = ("args", "kwargs", "spec")

    def __init__(self, args: tuple[Any, ...], kwargs: Mapping[str, Any], spec: _Signature) -> None:
        self.args, self.kwargs, self.spec = args, kwargs, spec

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.kwargs:
            return self.kwargs[name]
        i = self.spec.positions.get(name)
        if i is not None and 0 <= i < len(self.args):
            return self.args[i]
        return self.spec.defaults.get(name, default)

    def has(self, name: str) -> bool:
        """Whether the function has a parameter ``name`` (a newer torch's ``group_src``)."""
        return name in self.spec.names


@dataclass(frozen=True)
class _Signature:
    positions: dict[str, int]
    names: frozenset[str]
    defaults: dict[str, Any]

    @staticmethod
    def of(fn: Callable[..., Any], *, method: bool) -> _Signature:
        """``fn``'s parameters; ``method``: less its first (``self``)."""
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return _Signature({}, frozenset(), {})
        if method:
            params = params[1:]
        positions = {p.name: i for i, p in enumerate(params) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)}
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        return _Signature(positions, frozenset(p.name for p in params), defaults)


def _dtype(d: Any) -> str:
    name = str(d)
    return name[len("torch."):] if name.startswith("torch.") else name


def _capturing(t: Any) -> bool:
    torch = sys.modules.get("torch")
    if torch is None or not getattr(t, "is_cuda", False):
        return False
    capturing = getattr(torch.cuda, "is_current_stream_capturing", None)
    try:
        return bool(capturing()) if capturing is not None else False
    except Exception:  # noqa: BLE001 - no CUDA context: nothing is captured
        return False


def _on_cpu(t: Any) -> bool:
    device = getattr(t, "device", None)
    return getattr(device, "type", None) == "cpu"


def _concat_shape(tensors: Sequence[Any]) -> list[int]:
    """The shape of ``tensors`` concatenated along their first dimension;
    their elements in one dimension where the others differ."""
    shapes = [[int(d) for d in t.shape] for t in tensors]
    if shapes and all(s and s[1:] == shapes[0][1:] for s in shapes):
        return [sum(s[0] for s in shapes), *shapes[0][1:]]
    return [sum(int(t.numel()) for t in tensors)]


def _reduce_name(op: Any) -> str:
    ReduceOp = sys.modules["torch.distributed"].ReduceOp  # noqa: N806 - torch's name
    if op is None:
        return "sum"
    for attr, name in (("SUM", "sum"), ("AVG", "avg"), ("MAX", "max"), ("MIN", "min"), ("PRODUCT", "prod"),
                       ("PREMUL_SUM", "sum"), ("BAND", "band"), ("BOR", "bor"), ("BXOR", "bxor")):
        value = getattr(ReduceOp, attr, None)
        try:
            if value is not None and op == value:
                return name
        except Exception:  # noqa: BLE001 - an op torch cannot compare: named below
            pass
    return str(getattr(op, "name", op)).lower()


def _group_ranks(group: Any) -> list[int] | None:
    """The group's global ranks in its own order; ``None`` where this rank
    is not in it (torch runs nothing then)."""
    dist = sys.modules["torch.distributed"]
    if group is None or group is getattr(dist.GroupMember, "WORLD", None):
        return list(range(dist.get_world_size()))
    try:
        ranks = [int(r) for r in dist.get_process_group_ranks(group)]
    except Exception:  # noqa: BLE001 - not a group of this rank (GroupMember.NON_GROUP_MEMBER)
        return None
    return ranks if dist.get_rank() in ranks else None


def _peer(a: _Args, name: str, group_name: str, ranks: Sequence[int]) -> int | None:
    """A peer argument as a global rank: ``src``/``dst`` are global, a newer
    torch's ``group_src``/``group_dst`` are ranks in the group."""
    value = a.get(name)
    if value is not None:
        return int(value)
    in_group = a.get(group_name) if a.has(group_name) else None
    if in_group is not None:
        return int(ranks[int(in_group)])
    return None


def _event(op: str, ranks: list[int] | None, t: Any, *, shape: list[int] | None = None, reduce: Any = None,
           peer: int | None = None, reduces: bool = False) -> list[_Event]:
    if ranks is None or t is None:
        return []
    inst = _current
    if inst is not None and not inst.cpu and _on_cpu(t):
        return []
    return [_Event(op, ranks, [int(d) for d in t.shape] if shape is None else shape, _dtype(t.dtype),
                   _reduce_name(reduce) if reduces else None, peer, _capturing(t))]


# torch.distributed's functions: what each call is, by the names its parameters have.
def _t_all_reduce(a: _Args) -> list[_Event]:
    return _event("all_reduce", _group_ranks(a.get("group")), a.get("tensor"), reduce=a.get("op"), reduces=True)


def _t_all_gather_into_tensor(a: _Args) -> list[_Event]:
    return _event("all_gather", _group_ranks(a.get("group")), a.get("input_tensor"))


def _t_all_gather(a: _Args) -> list[_Event]:
    return _event("all_gather", _group_ranks(a.get("group")), a.get("tensor"))


def _t_reduce_scatter_tensor(a: _Args) -> list[_Event]:
    return _event("reduce_scatter", _group_ranks(a.get("group")), a.get("input"), reduce=a.get("op"), reduces=True)


def _t_reduce_scatter(a: _Args) -> list[_Event]:
    parts = a.get("input_list")
    if not parts:
        return []
    return _event("reduce_scatter", _group_ranks(a.get("group")), parts[0], shape=_concat_shape(parts),
                  reduce=a.get("op"), reduces=True)


def _t_all_to_all_single(a: _Args) -> list[_Event]:
    return _event("all_to_all", _group_ranks(a.get("group")), a.get("input"))


def _t_all_to_all(a: _Args) -> list[_Event]:
    parts = a.get("input_tensor_list")
    if not parts:
        return []
    return _event("all_to_all", _group_ranks(a.get("group")), parts[0], shape=_concat_shape(parts))


def _rooted(op: str, a: _Args, name: str, group_name: str, **kw: Any) -> list[_Event]:
    """A call with a peer (a root, or the other end): none given, torch
    refuses the call, and nothing is written."""
    ranks = _group_ranks(a.get("group"))
    peer = None if ranks is None else _peer(a, name, group_name, ranks)
    return [] if peer is None else _event(op, ranks, a.get("tensor"), peer=peer, **kw)


def _t_broadcast(a: _Args) -> list[_Event]:
    return _rooted("broadcast", a, "src", "group_src")


def _t_reduce(a: _Args) -> list[_Event]:
    return _rooted("reduce", a, "dst", "group_dst", reduce=a.get("op"), reduces=True)


def _t_send(a: _Args) -> list[_Event]:
    return _rooted("send", a, "dst", "group_dst")


def _t_recv(a: _Args) -> list[_Event]:
    return _rooted("recv", a, "src", "group_src")  # from any source: _t_recv_any, once it returns


def _t_recv_any(a: _Args, result: Any) -> list[_Event]:
    """A ``recv`` from any source, once it returns the rank it came from."""
    if a.get("src") is not None or a.get("group_src") is not None or not isinstance(result, int) or result < 0:
        return []
    ranks = _group_ranks(a.get("group"))
    return _event("recv", ranks, a.get("tensor"), peer=int(result))


def _t_irecv(a: _Args) -> list[_Event]:
    if a.get("src") is None and a.get("group_src") is None and _group_ranks(a.get("group")) is not None:
        _warn("an irecv from any source is not written: its peer is known only when it completes")
    return _t_recv(a)


def _t_batch_isend_irecv(a: _Args) -> list[_Event]:
    events: list[_Event] = []
    for p in a.get("p2p_op_list") or ():
        name = getattr(_original(getattr(p, "op", None)), "__name__", "")
        if name not in ("isend", "irecv"):
            continue
        ranks = _group_ranks(getattr(p, "group", None))
        if ranks is None:
            continue
        peer = getattr(p, "peer", None)
        if peer is None and getattr(p, "group_peer", None) is not None:
            peer = ranks[int(p.group_peer)]
        if peer is None:
            continue
        events += _event("send" if name == "isend" else "recv", ranks, p.tensor, peer=int(peer))
    return events


# name -> (before the call, after the call)
_TORCH: dict[str, tuple[Callable[[_Args], list[_Event]], Callable[[_Args, Any], list[_Event]] | None]] = {
    "all_reduce": (_t_all_reduce, None),
    "all_gather_into_tensor": (_t_all_gather_into_tensor, None),
    "_all_gather_base": (_t_all_gather_into_tensor, None),
    "all_gather": (_t_all_gather, None),
    "reduce_scatter_tensor": (_t_reduce_scatter_tensor, None),
    "_reduce_scatter_base": (_t_reduce_scatter_tensor, None),
    "reduce_scatter": (_t_reduce_scatter, None),
    "all_to_all_single": (_t_all_to_all_single, None),
    "all_to_all": (_t_all_to_all, None),
    "broadcast": (_t_broadcast, None),
    "reduce": (_t_reduce, None),
    "send": (_t_send, None),
    "isend": (_t_send, None),
    "recv": (_t_recv, _t_recv_any),
    "irecv": (_t_irecv, None),
    "batch_isend_irecv": (_t_batch_isend_irecv, None),
}


# An engine's GroupCoordinator: self.ranks are the group's global ranks; a
# src or dst is a rank in the group. The parameter names are vLLM's and SGLang's.
def _c_ranks(self: Any) -> list[int] | None:
    ranks = getattr(self, "ranks", None)
    if ranks is None or len(ranks) < 2:  # one rank: the engine moves nothing
        return None
    return [int(r) for r in ranks]


def _c_local(self: Any, value: Any, step: int) -> int:
    """A rank in the group, or the engine's default: the next (+1) or the previous (-1) rank."""
    ranks = _c_ranks(self) or []
    if value is None:
        value = (int(getattr(self, "rank_in_group", ranks.index(int(self.rank)))) + step) % len(ranks)
    return int(value)


def _c_all_reduce(self: Any, a: _Args) -> list[_Event]:
    return _event("all_reduce", _c_ranks(self), a.get("input_"), reduces=True)


def _c_all_gather(self: Any, a: _Args) -> list[_Event]:
    return _event("all_gather", _c_ranks(self), a.get("input_"))


def _c_all_gatherv(self: Any, a: _Args) -> list[_Event]:
    inputs = a.get("input_")
    parts = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    ranks = _c_ranks(self)
    return [e for t in parts for e in _event("all_gather", ranks, t)]


def _c_reduce_scatter(self: Any, a: _Args) -> list[_Event]:
    if a.has("input_list"):  # SGLang: (output, input_list)
        parts = a.get("input_list")
        if not parts:
            return []
        return _event("reduce_scatter", _c_ranks(self), parts[0], shape=_concat_shape(parts), reduces=True)
    return _event("reduce_scatter", _c_ranks(self), a.get("input_"), reduces=True)


def _c_reduce_scatter_tensor(self: Any, a: _Args) -> list[_Event]:
    return _event("reduce_scatter", _c_ranks(self), a.get("input"), reduces=True)


def _c_all_gather_into_tensor(self: Any, a: _Args) -> list[_Event]:
    return _event("all_gather", _c_ranks(self), a.get("input"))


def _c_all_to_all_single(self: Any, a: _Args) -> list[_Event]:
    return _event("all_to_all", _c_ranks(self), a.get("input"))


def _c_broadcast(self: Any, a: _Args) -> list[_Event]:
    ranks = _c_ranks(self)
    return [] if ranks is None else _event("broadcast", ranks, a.get("input_"), peer=ranks[int(a.get("src", 0))])


def _c_send(self: Any, a: _Args) -> list[_Event]:
    ranks = _c_ranks(self)
    return [] if ranks is None else _event("send", ranks, a.get("tensor"), peer=ranks[_c_local(self, a.get("dst"), 1)])


def _c_recv(self: Any, a: _Args) -> list[_Event]:
    ranks = _c_ranks(self)
    if ranks is None:
        return []
    shape, dtype = [int(d) for d in a.get("size")], a.get("dtype")
    inst = _current
    if inst is not None and not inst.cpu and getattr(getattr(self, "device", None), "type", None) == "cpu":
        return []
    return [_Event("recv", ranks, shape, _dtype(dtype), None, ranks[_c_local(self, a.get("src"), -1)])]


def _c_fused_allreduce_rmsnorm(self: Any, a: _Args, result: Any) -> list[_Event]:
    return [] if result is None else _c_all_reduce(self, a)


_Before = Callable[[Any, _Args], list[_Event]]
_After = Callable[[Any, _Args, Any], list[_Event]]

# method -> (before the call, after the call); the private ones are what the
# engines' registered custom ops call (compiled graphs reach them directly).
_COORDINATOR: dict[str, tuple[_Before | None, _After | None]] = {
    "all_reduce": (_c_all_reduce, None),
    "_all_reduce_out_place": (_c_all_reduce, None),
    "_all_reduce_in_place": (_c_all_reduce, None),
    "_flashinfer_allreduce": (_c_all_reduce, None),
    "all_gather": (_c_all_gather, None),
    "_all_gather_out_place": (_c_all_gather, None),
    "all_gatherv": (_c_all_gatherv, None),
    "reduce_scatter": (_c_reduce_scatter, None),
    "_reduce_scatter_out_place": (_c_reduce_scatter, None),
    "reduce_scatterv": (_c_reduce_scatter, None),
    "reduce_scatter_tensor": (_c_reduce_scatter_tensor, None),
    "_reduce_scatter_tensor": (_c_reduce_scatter_tensor, None),
    "all_gather_into_tensor": (_c_all_gather_into_tensor, None),
    "_all_gather_into_tensor": (_c_all_gather_into_tensor, None),
    "all_to_all_single": (_c_all_to_all_single, None),
    "_all_to_all_single": (_c_all_to_all_single, None),
    "broadcast": (_c_broadcast, None),
    "send": (_c_send, None),
    "recv": (_c_recv, None),
    "fused_allreduce_rmsnorm": (None, _c_fused_allreduce_rmsnorm),
}


# ---- the wrappers -------------------------------------------------------------------------------------------------

_local = threading.local()  # depth: how many traced calls this thread is inside


def _compiling() -> bool:
    """Whether torch.compile is tracing this call (then the original is
    called as is, so the graph holds torch's own collective)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    compiler = getattr(torch, "compiler", None)
    check = getattr(compiler, "is_compiling", None)
    if check is None:
        dynamo = sys.modules.get("torch._dynamo")
        check = getattr(dynamo, "is_compiling", None)
    return bool(check()) if check is not None else False


def _write(inst: _Installed, events: list[_Event], rank_now: Callable[[], int]) -> None:
    try:
        rank = inst.writer.open_for(rank_now)
    except Exception as e:  # noqa: BLE001 - no rank to name the file by: the call is made untraced
        _warn(f"no rank for the trace file ({type(e).__name__}: {e}); calls are not written until there is one")
        return
    if rank is None:
        return
    tag_now = _TAG.get()
    for e in events:
        line: dict[str, Any] = {"rank": rank, "op": e.op, "group": e.group, "shape": e.shape, "dtype": e.dtype}
        if e.reduce is not None:
            line["reduce"] = e.reduce
        if e.peer is not None:
            line["peer"] = e.peer
        text = tag_now
        if e.captured:
            text = _tag_text(f"{_CAPTURE}: {tag_now}" if tag_now else _CAPTURE)
        if text:
            line["tag"] = text
        inst.writer.write((json.dumps(line) + "\n").encode("utf-8"))


def _torch_rank() -> int:
    return int(sys.modules["torch.distributed"].get_rank())


def _traced(fn: Callable[..., Any], before: Callable[..., list[_Event]] | None,
            after: Callable[..., list[_Event]] | None, *, method: bool) -> Callable[..., Any]:
    """``fn`` writing its calls: ``before`` describes a call before it runs,
    ``after`` (given its result) once it returns. ``method``: the first
    argument is the engine's coordinator."""
    spec = _Signature.of(fn, method=method)

    def describe(describer: Callable[..., list[_Event]], args: tuple[Any, ...], kwargs: dict[str, Any],
                 *result: Any) -> list[_Event]:
        try:
            if method:
                return describer(args[0], _Args(args[1:], kwargs, spec), *result)
            dist = sys.modules.get("torch.distributed")
            if dist is None or not dist.is_initialized():
                return []
            return describer(_Args(args, kwargs, spec), *result)
        except Exception as e:  # noqa: BLE001 - a call seam.trace cannot read is still made
            _warn(f"a call to {getattr(fn, '__qualname__', fn)} was not written: {type(e).__name__}: {e}")
            return []

    @functools.wraps(fn)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if _compiling():
            return fn(*args, **kwargs)
        inst = _current
        if inst is None or getattr(_local, "depth", 0):
            return fn(*args, **kwargs)
        rank_now = (lambda: int(args[0].rank)) if method else _torch_rank
        if before is not None:
            events = describe(before, args, kwargs)
            if events:
                _write(inst, events, rank_now)
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            result = fn(*args, **kwargs)
        finally:
            _local.depth -= 1
        if after is not None:
            events = describe(after, args, kwargs, result)
            if events:
                _write(inst, events, rank_now)
        return result

    traced.__seam_trace__ = True  # type: ignore[attr-defined]
    return traced


class _SameAs:
    """A wrapper that compares equal to the function it wraps: torch checks a
    ``P2POp``'s op against ``isend`` and ``irecv`` by ``==`` (``_check_op``,
    and ``batch_isend_irecv`` in newer releases), so an op made before
    :func:`install` (or under it and used after :func:`uninstall`) still is
    one of them."""

    def __init__(self, wrapper: Callable[..., Any]) -> None:
        functools.update_wrapper(self, wrapper)  # its name, its doc, __wrapped__: the wrapper
        self._call = wrapper
        self._fn = _original(wrapper)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return other is self or _original(other) is self._fn

    def __hash__(self) -> int:
        return hash(self._fn)

    def __repr__(self) -> str:
        return f"<seam.trace wrapper of {self._fn!r}>"


def _original(fn: Any) -> Any:
    """``fn`` without seam.trace's wrapper (one an earlier install left)."""
    while getattr(fn, "__seam_trace__", False):
        fn = fn.__wrapped__
    return fn


# ---- installing ---------------------------------------------------------------------------------------------------

@dataclass
class _Installed:
    writer: _Writer
    cpu: bool
    engine: str | None
    patches: list[tuple[Any, str, Any]] = field(default_factory=list)  # (owner, name, what was there)
    finder: _AfterImport | None = None


_current: _Installed | None = None
_install_lock = threading.RLock()


def _patch(inst: _Installed, owner: Any, name: str, wrapper: Any) -> None:
    inst.patches.append((owner, name, owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name)))
    setattr(owner, name, wrapper)


def _patch_torch(inst: _Installed, dist: ModuleType) -> None:
    c10d = getattr(dist, "distributed_c10d", None) or importlib.import_module("torch.distributed.distributed_c10d")
    for name, (before, after) in _TORCH.items():
        fn = getattr(c10d, name, None)
        if fn is None:  # not in this torch
            continue
        wrapper: Any = _traced(_original(fn), before, after, method=False)
        if name in ("isend", "irecv"):
            wrapper = _SameAs(wrapper)
        _patch(inst, c10d, name, wrapper)
        if getattr(dist, name, None) is not None:
            _patch(inst, dist, name, wrapper)


def _patch_engine(inst: _Installed, module: ModuleType) -> None:
    cls = getattr(module, "GroupCoordinator", None)
    if cls is None:
        _warn(f"{module.__name__} has no GroupCoordinator: only torch.distributed's calls are written")
        return
    for name, (before, after) in _COORDINATOR.items():
        fn = cls.__dict__.get(name)
        if not inspect.isfunction(fn):  # absent here (another version), or not a plain method
            continue
        _patch(inst, cls, name, _traced(_original(fn), before, after, method=True))


class _ThenLoader(importlib.abc.Loader):
    """A module's own loader, then ``then(module)`` once it has run."""

    def __init__(self, loader: Any, then: Callable[[ModuleType], None]) -> None:
        self._loader, self._then = loader, then

    def create_module(self, spec: Any) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._then(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a function on a module when it is first imported, after its code
    (torch.distributed, an engine's parallel_state)."""

    def __init__(self) -> None:
        self.then: dict[str, Callable[[ModuleType], None]] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        then = self.then.pop(fullname, None)
        if then is None:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ThenLoader(spec.loader, then)
        return spec


def _when_imported(inst: _Installed, name: str, then: Callable[[ModuleType], None]) -> None:
    """``then(module)`` now if ``name`` is imported, else when it is."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
        return

    def guarded(module: ModuleType) -> None:
        with _install_lock:
            if _current is inst:
                try:
                    then(module)
                except Exception as e:  # noqa: BLE001 - the import goes on untraced
                    _warn(f"could not wrap {name}: {type(e).__name__}: {e}")

    if inst.finder is None:
        inst.finder = _AfterImport()
        sys.meta_path.insert(0, inst.finder)
    inst.finder.then[name] = guarded


def _target(path_or_dir: object) -> str:
    if isinstance(path_or_dir, os.PathLike):
        path_or_dir = os.fspath(path_or_dir)
    if isinstance(path_or_dir, bytes):
        path_or_dir = os.fsdecode(path_or_dir)
    if not isinstance(path_or_dir, str) or not path_or_dir:
        raise BadInput(f"path_or_dir must be a folder or a file name with {{rank}}, not {path_or_dir!r}")
    if "\0" in path_or_dir:
        raise BadInput(f"path_or_dir={path_or_dir!r} holds a NUL byte")
    return path_or_dir


def _check(rank: object, engine: object, cpu: object) -> None:
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < _MAX_RANKS):
        raise BadInput(f"rank={rank!r} must be None (torch.distributed's rank) or an int from 0 to {_MAX_RANKS - 1}")
    if engine is not None and engine not in ENGINES:
        raise BadInput(f"engine={engine!r} is not one of {', '.join(ENGINES)} (or None: torch.distributed only)")
    if not isinstance(cpu, bool):
        raise BadInput(f"cpu must be True or False, not {type(cpu).__name__}")


def _install(target: str, rank: int | None, engine: str | None, cpu: bool, *, now: bool) -> None:
    global _current
    with _install_lock:
        uninstall()
        if "{rank}" not in target and "{pid}" not in target:
            if os.path.exists(target) and not os.path.isdir(target):
                raise NotADirectoryError("a file is there")
            os.makedirs(target, exist_ok=True)
        inst = _Installed(_Writer(target, rank), cpu, engine)
        _current = inst
        try:
            if now:
                import torch.distributed as dist

                if not dist.is_available():
                    raise BadInput("this torch was built without torch.distributed: there is nothing to trace")
                _patch_torch(inst, dist)
            else:
                _when_imported(inst, "torch.distributed", lambda m: _patch_torch(inst, m))
            if engine is not None:
                module = _ENGINE_MODULES[engine]
                if now and module not in sys.modules and importlib.util.find_spec(engine) is None:
                    _warn(f"{engine} is not importable here: only torch.distributed's calls are written")
                _when_imported(inst, module, lambda m: _patch_engine(inst, m))
        except BaseException:
            uninstall()
            raise


def install(path_or_dir: str | os.PathLike[str], *, rank: int | None = None, engine: str | None = None,
            cpu: bool = True) -> None:
    """Wraps torch.distributed's collectives and point-to-point calls in
    place, so that each call this process makes is written as a line of
    ``path_or_dir``: a folder (made if missing) that gets
    ``seam-trace.<rank>.jsonl``, or a file name holding ``{rank}`` (and
    optionally ``{pid}``). The file is opened at the first call written,
    with ``rank`` or else ``torch.distributed.get_rank()`` (the process
    group exists by then); a file of that name already there is kept, and
    the lines go to the name with ``.<pid>`` before ``.jsonl``.

    ``engine`` (``"vllm"`` or ``"sglang"``) also wraps that engine's
    ``GroupCoordinator``, now if it is imported, else when it is. ``cpu``:
    whether calls on CPU tensors are written. Installing again replaces the
    earlier install. Raises :class:`seam.BadInput` for a bad argument.
    """
    target = _target(path_or_dir)
    _check(rank, engine, cpu)
    try:
        _install(target, rank, engine, cpu, now=True)
    except NotADirectoryError as e:
        raise BadInput(f"{target} is not a folder ({e}): give a folder, or a file name with {{rank}}") from None


def uninstall() -> None:
    """Puts back what :func:`install` wrapped (where nothing replaced it
    since) and closes the file; a wrapper something else still holds calls
    straight through. Nothing happens when nothing is installed."""
    global _current
    with _install_lock:
        inst, _current = _current, None
        if inst is None:
            return
        for owner, name, before in reversed(inst.patches):
            if getattr(owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None),
                       "__seam_trace__", False):
                setattr(owner, name, before)
        if inst.finder is not None:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(inst.finder)
        inst.writer.close()


def install_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Installs as ``SEAM_TRACE`` says (a folder, or a file name with
    ``{rank}``), with ``SEAM_TRACE_ENGINE`` (``vllm`` or ``sglang``) and
    ``SEAM_TRACE_CPU=0`` (leave out calls on CPU tensors). Nothing is
    imported here: torch.distributed is wrapped when it is imported, and
    the engine's ``GroupCoordinator`` when its module is, so a process that
    never imports torch is not slowed. Returns whether ``SEAM_TRACE`` was
    set; raises :class:`seam.BadInput` for a value it cannot take."""
    env = os.environ if environ is None else environ
    target = env.get("SEAM_TRACE", "")
    if not target:
        return False
    engine = env.get("SEAM_TRACE_ENGINE") or None
    cpu = env.get("SEAM_TRACE_CPU", "1")
    if cpu not in ("0", "1"):
        raise BadInput(f"SEAM_TRACE_CPU={cpu!r} must be 1 (write calls on CPU tensors) or 0")
    if engine is not None and engine not in ENGINES:
        raise BadInput(f"SEAM_TRACE_ENGINE={engine!r} is not one of {', '.join(ENGINES)}")
    _install(_target(target), None, engine, cpu == "1", now=False)
    return True


def hook_dir() -> str:
    """The folder whose ``sitecustomize.py`` runs :func:`install_from_env`
    in every Python process that has it on ``PYTHONPATH``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_trace_hook")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m seam.trace --hook-dir``: prints :func:`hook_dir`."""
    parser = argparse.ArgumentParser(
        prog="python3 -m seam.trace",
        description="seam.trace records what each process calls in torch.distributed as seam's JSON lines.",
        epilog="PYTHONPATH=$(python3 -m seam.trace --hook-dir):$PYTHONPATH SEAM_TRACE=/tmp/t "
               "[SEAM_TRACE_ENGINE=vllm|sglang] [SEAM_TRACE_CPU=0] python3 -m ... traces every process it starts")
    parser.add_argument("--hook-dir", action="store_true",
                        help="print the folder holding the sitecustomize.py that installs the hook when SEAM_TRACE "
                             "is set")
    args = parser.parse_args(argv)
    if not args.hook_dir:
        parser.print_usage(sys.stderr)
        print("python3 -m seam.trace: give --hook-dir", file=sys.stderr)
        return 2
    print(hook_dir())
    return 0


def _after_fork() -> None:
    """A forked child opens its own file at its first line (a lock another
    thread held at the fork is not held in the child)."""
    inst = _current
    if inst is not None:
        inst.writer.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


if __name__ == "__main__":
    sys.exit(main())
