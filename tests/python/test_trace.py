"""seam.trace: four gloo ranks write, line for line, what they called in
torch.distributed (and results are what they are untraced); an engine's
GroupCoordinator is written once a call with its own ranks; the
sitecustomize hook traces a process started with SEAM_TRACE. Every line is
checked against the rules of seam's reader (src/trace/jsonl.cc).

These tests need torch (Debian's python3-torch, gloo on the CPU). Without it
they are skipped, saying so; with SEAM_REQUIRE_TORCH=1 (CI) they fail.
"""
import json
import math
import os
import pathlib
import subprocess
import sys
import textwrap
import time
import types

import pytest

from conftest import require_torch  # noqa: E402

require_torch("seam.trace's tests")

import torch  # noqa: E402 - after torch is known to be there
import torch.distributed as dist  # noqa: E402
import seam  # noqa: E402
import seam.trace as trace  # noqa: E402

WORKER = pathlib.Path(__file__).with_name("trace_worker.py")
WORLD = [0, 1, 2, 3]

# seam's reader (src/trace/jsonl.cc, include/seam/trace.h), rule for rule.
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send", "recv")
DTYPES = ("bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "uint8", "int32",
          "int64", "bool")
REDUCTIONS = ("sum", "avg", "max", "min", "prod")
KEYS = ("rank", "op", "group", "shape", "dtype", "reduce", "peer", "tag", "splits")


def _rank_ok(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 65536


def check_line(text: str) -> dict:
    """One line as seam's ReadJsonlTrace reads it; AssertionError naming
    the rule it breaks."""
    assert len(text.encode()) <= 64 * 1024, "longer than 64 KiB"
    j = json.loads(text)
    assert isinstance(j, dict), "not a JSON object"
    assert set(j) <= set(KEYS), f"unknown keys {set(j) - set(KEYS)}"
    assert {"rank", "op", "group", "shape", "dtype"} <= set(j), "a required key is missing"
    assert _rank_ok(j["rank"]), "rank"
    assert j["op"] in OPS, "op"
    g = j["group"]
    assert isinstance(g, list) and 1 <= len(g) <= 65536 and all(_rank_ok(r) for r in g), "group"
    assert len(set(g)) == len(g), "group names a rank twice"
    assert j["rank"] in g, "group does not hold the line's rank"
    s = j["shape"]
    assert isinstance(s, list) and len(s) <= 8, "shape"
    assert all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 1 << 40 for d in s), "shape sizes"
    assert math.prod(s) <= 1 << 40, "shape elements"
    assert j["dtype"] in DTYPES, "dtype"
    reduces = j["op"] in ("all_reduce", "reduce_scatter", "reduce")
    assert reduces == ("reduce" in j), "reduce where the op has none, or none where it has one"
    if reduces:
        assert j["reduce"] in REDUCTIONS, "reduce"
    has_peer = j["op"] in ("send", "recv", "broadcast", "reduce")
    assert has_peer == (j.get("peer") is not None), "peer where the op has none, or none where it has one"
    if has_peer:
        assert _rank_ok(j["peer"]) and j["peer"] in g, "peer is not in the group"
        assert j["op"] in ("broadcast", "reduce") or j["peer"] != j["rank"], "a send or recv to itself"
    if "tag" in j:
        assert isinstance(j["tag"], str) and len(j["tag"].encode()) <= 256, "tag"
    return j


def read_trace(path: pathlib.Path) -> list[dict]:
    text = path.read_text()
    assert text.endswith("\n") or not text, f"{path} ends inside a line"
    return [check_line(line) for line in text.splitlines()]


def line(rank: int, op: str, group: list[int], shape: list[int], dtype: str, reduce: str | None = None,
         peer: int | None = None, tag: str | None = None) -> dict:
    d = {"rank": rank, "op": op, "group": group, "shape": shape, "dtype": dtype}
    if reduce is not None:
        d["reduce"] = reduce
    if peer is not None:
        d["peer"] = peer
    if tag is not None:
        d["tag"] = tag
    return d


def expected_worker_lines(r: int) -> list[dict]:
    """What trace_worker.py's rank r calls, as seam.trace must write it."""
    tp, pp = [r // 2 * 2, r // 2 * 2 + 1], [r % 2, r % 2 + 2]
    tp_peer, pp_peer = tp[1 - tp.index(r)], pp[1 - pp.index(r)]
    tp_dir, pp_dir = ("send" if tp.index(r) == 0 else "recv"), ("send" if pp.index(r) == 0 else "recv")
    return [
        line(r, "all_reduce", WORLD, [2, 3], "float32", "sum", tag="layer 0 entry"),
        line(r, "all_reduce", tp, [5], "int64", "max"),
        line(r, "all_reduce", pp, [7], "float64", "min"),
        line(r, "all_reduce", WORLD, [1, 1, 11], "int32", "prod"),
        line(r, "all_gather", tp, [3, 2], "float32", tag="gather"),
        # What gloo refuses, written before torch raises:
        line(r, "all_reduce", WORLD, [13], "float32", "avg"),
        line(r, "all_gather", WORLD, [17], "float32"),  # all_gather_into_tensor: this rank's part
        line(r, "all_gather", WORLD, [19], "float16"),  # _all_gather_base
        line(r, "reduce_scatter", WORLD, [8, 5], "float32", "sum"),  # the list's whole input
        line(r, "reduce_scatter", WORLD, [12], "float32", "max"),  # reduce_scatter_tensor: the whole input
        line(r, "reduce_scatter", WORLD, [8], "float64", "sum"),  # _reduce_scatter_base
        line(r, "all_to_all", WORLD, [10, 3], "float32"),  # the list: everything this rank sends
        # What gloo runs:
        line(r, "all_to_all", WORLD, [8, 2], "float32"),
        line(r, "all_to_all", tp, [3], "int64"),
        line(r, "broadcast", WORLD, [23], "float32", peer=1),
        line(r, "broadcast", tp, [2, 29], "uint8", peer=tp[1]),
        line(r, "reduce", WORLD, [31], "float32", "max", peer=2),
        line(r, "send" if r < 2 else "recv", WORLD, [37], "float32", peer=r + 2 if r < 2 else r - 2),
        line(r, pp_dir, pp, [4, 41], "int32", peer=pp_peer, tag="pp boundary"),
        line(r, tp_dir, WORLD, [43], "float32", peer=tp_peer),  # the receiver's from any source
        line(r, tp_dir, WORLD, [47], "float64", peer=tp_peer, tag="inner"),
        line(r, "all_reduce", tp, [53], "float32", "sum", tag="outer"),
        line(r, "send", tp, [59], "float32", peer=tp_peer),
        line(r, "recv", tp, [59], "float32", peer=tp_peer),
    ]


def _gloo_env() -> dict:
    return dict(os.environ, GLOO_SOCKET_IFNAME="lo")


def test_four_gloo_ranks_write_each_call_and_their_results_are_unchanged(tmp_path):
    traces = tmp_path / "traces"
    init = f"file://{tmp_path}/store"
    results = [tmp_path / f"result.{r}.json" for r in WORLD]
    logs = [open(tmp_path / f"log.{r}", "w") for r in WORLD]
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(r), "4", init, str(traces), str(results[r])],
                              env=_gloo_env(), stdout=logs[r], stderr=subprocess.STDOUT) for r in WORLD]
    hang = traces / "hang" / "rank-0.jsonl"

    def why() -> str:
        return "\n".join(f"rank {r}: {(tmp_path / f'log.{r}').read_text()[-3000:]}" for r in WORLD)

    try:
        deadline = time.monotonic() + 90
        while not (all(p.exists() for p in results) and hang.exists() and hang.read_text().endswith("\n")):
            assert all(p.poll() is None for p in procs), "a rank exited early:\n" + why()
            assert time.monotonic() < deadline, "the ranks did not finish in 90 s:\n" + why()
            time.sleep(0.05)
        # Rank 0 waits in a recv no rank answers: its line is there while it waits.
        time.sleep(0.2)
        assert all(p.poll() is None for p in procs), why()
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for f in logs:
            f.close()
    for r in WORLD:
        result = json.loads(results[r].read_text())
        assert result["failures"] == [], f"rank {r}: {result['failures']}\n" + why()
        assert all(("support" in e) or ("Gloo" in e) for e in result["errors"].values()), result["errors"]

    assert sorted(p.name for p in traces.iterdir()) == ["hang"] + [f"seam-trace.{r}.jsonl" for r in WORLD]
    for r in WORLD:
        got = read_trace(traces / f"seam-trace.{r}.jsonl")
        want = expected_worker_lines(r)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"rank {r} line {i + 1}"
        assert len(got) == len(want), f"rank {r}: {len(got)} lines, not {len(want)}"
    # The call that hangs is the rank's last line, whole, though the process was killed.
    assert sorted(p.name for p in (traces / "hang").iterdir()) == ["rank-0.jsonl"]
    assert read_trace(hang) == [line(0, "recv", WORLD, [71], "float32", peer=1)]


# ---- in this process: a world of one rank ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def world1(tmp_path_factory):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    store = tmp_path_factory.mktemp("store") / "store"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


@pytest.fixture(autouse=True)
def _uninstalled():
    yield
    trace.uninstall()


class VllmCoordinator:
    """vLLM's GroupCoordinator as seam.trace reads it (vllm/distributed/
    parallel_state.py): its attributes and its methods' parameter names.
    Each method makes the torch.distributed call its backend would (a
    one-rank world here), which must not be written a second time."""

    def __init__(self, ranks: list[int], rank: int) -> None:
        self.rank, self.ranks, self.world_size = rank, list(ranks), len(ranks)
        self.rank_in_group = self.ranks.index(rank)
        self.device = torch.device("cpu")
        self.calls = 0

    def _backend(self) -> None:
        self.calls += 1
        dist.all_reduce(torch.zeros(1))

    def all_reduce(self, input_):
        if self.world_size == 1:
            return input_
        return self._all_reduce_out_place(input_)  # as torch.ops.vllm.all_reduce does

    def _all_reduce_out_place(self, input_):
        self._backend()
        return input_

    def all_gather(self, input_, dim=-1):
        if self.world_size == 1:
            return input_
        return self._all_gather_out_place(input_, dim)

    def _all_gather_out_place(self, input_, dim):
        self._backend()
        return torch.cat([input_] * self.world_size, dim)

    def all_gatherv(self, input_, dim=0, sizes=None):
        self._backend()
        return input_

    def reduce_scatter(self, input_, dim=-1):
        if self.world_size == 1:
            return input_
        return self._reduce_scatter_out_place(input_, dim)

    def _reduce_scatter_out_place(self, input_, dim):
        self._backend()
        return input_.chunk(self.world_size, dim)[self.rank_in_group]

    def reduce_scatterv(self, input_, dim=-1, sizes=None):
        self._backend()
        return input_

    def broadcast(self, input_, src=0):
        if self.world_size == 1:
            return input_
        self._backend()
        return input_

    def send(self, tensor, dst=None):
        self._backend()

    def recv(self, size, dtype, src=None):
        self._backend()
        return torch.zeros(size, dtype=dtype)


@pytest.fixture
def fake_vllm(monkeypatch):
    names = ("vllm", "vllm.distributed", "vllm.distributed.parallel_state")
    for name in names:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["vllm.distributed.parallel_state"].GroupCoordinator = VllmCoordinator
    return VllmCoordinator


def test_vllm_coordinator_calls_are_written_once_with_its_ranks(world1, fake_vllm, tmp_path):
    original = {n: f for n, f in vars(VllmCoordinator).items() if callable(f)}
    trace.install(tmp_path, rank=1, engine="vllm")
    tp, pp, alone = VllmCoordinator([3, 1], 1), VllmCoordinator([0, 1, 2], 1), VllmCoordinator([1], 1)
    x = torch.ones(2, 8, dtype=torch.bfloat16)
    with trace.tag("layer 1 exit"):
        assert tp.all_reduce(x) is x
    tp._all_reduce_out_place(torch.ones(5, dtype=torch.float16))  # what a compiled graph's custom op reaches
    assert tp.all_gather(torch.ones(4, 3), dim=0).shape == (8, 3)
    tp.all_gatherv([torch.ones(2, 3), torch.ones(5)])
    assert tp.reduce_scatter(torch.ones(6, 2), dim=0).shape == (3, 2)
    tp.reduce_scatterv(torch.ones(7, 3), sizes=[3, 4])
    tp.broadcast(torch.ones(9))
    pp.send(torch.ones(10))  # to the next rank in the group
    pp.send(torch.ones(11), dst=0)
    assert pp.recv(torch.Size([12, 2]), torch.bfloat16).dtype == torch.bfloat16  # from the previous one
    alone.all_reduce(torch.ones(13))  # one rank: nothing moves, nothing is written
    assert tp.calls + pp.calls == 10 and alone.calls == 0

    assert read_trace(tmp_path / "seam-trace.1.jsonl") == [
        line(1, "all_reduce", [3, 1], [2, 8], "bfloat16", "sum", tag="layer 1 exit"),
        line(1, "all_reduce", [3, 1], [5], "float16", "sum"),
        line(1, "all_gather", [3, 1], [4, 3], "float32"),
        line(1, "all_gather", [3, 1], [2, 3], "float32"),
        line(1, "all_gather", [3, 1], [5], "float32"),
        line(1, "reduce_scatter", [3, 1], [6, 2], "float32", "sum"),
        line(1, "reduce_scatter", [3, 1], [7, 3], "float32", "sum"),
        line(1, "broadcast", [3, 1], [9], "float32", peer=3),
        line(1, "send", [0, 1, 2], [10], "float32", peer=2),
        line(1, "send", [0, 1, 2], [11], "float32", peer=0),
        line(1, "recv", [0, 1, 2], [12, 2], "bfloat16", peer=0),
    ]
    trace.uninstall()
    assert {n: f for n, f in vars(VllmCoordinator).items() if callable(f)} == original


SGLANG_PARALLEL_STATE = '''
"""SGLang's GroupCoordinator as seam.trace reads it (python/sglang/srt/
distributed/parallel_state.py): its attributes, its methods' parameter
names, and its custom ops calling the coordinator's private methods."""
import torch
import torch.distributed

_groups = {}


def _backend():
    torch.distributed.all_reduce(torch.zeros(1))  # one rank here; never written


def inplace_all_reduce(tensor, group_name):  # a registered custom op in SGLang
    _groups[group_name]._all_reduce_in_place(tensor)


class GroupCoordinator:
    def __init__(self, ranks, rank, name="tp:0"):
        self.rank, self.ranks, self.world_size = rank, list(ranks), len(ranks)
        self.rank_in_group = self.ranks.index(rank)
        self.unique_name = name
        self.device = torch.device("cpu")
        self.ca_comm = None
        _groups[name] = self

    def all_reduce(self, input_):
        if self.world_size == 1:
            return input_
        inplace_all_reduce(input_, group_name=self.unique_name)
        return input_

    def _all_reduce_in_place(self, input_):
        _backend()

    def fused_allreduce_rmsnorm(self, input_, residual_inp_, weight_, eps):
        if self.ca_comm is None:
            return None  # the caller falls back to all_reduce
        return input_, residual_inp_

    def reduce_scatter_tensor(self, output, input):
        self._reduce_scatter_tensor(output, input)

    def _reduce_scatter_tensor(self, output, input):
        _backend()
        return output

    def reduce_scatter(self, output, input_list):
        _backend()
        return output

    def reduce_scatterv(self, input_, output=None, sizes=None):
        _backend()
        return input_

    def all_gather_into_tensor(self, output, input):
        self._all_gather_into_tensor(output, input)

    def _all_gather_into_tensor(self, output, input):
        _backend()

    def all_gather(self, input_, dim=-1, output_tensor_list=None):
        output = torch.empty((input_.shape[0] * self.world_size,) + tuple(input_.shape[1:]), dtype=input_.dtype)
        self.all_gather_into_tensor(output, input_)
        return output

    def all_gatherv(self, input_, sizes=None, output=None):
        _backend()
        return [input_]

    def all_to_all_single(self, output, input):
        if self.world_size == 1:
            output.copy_(input)
            return
        self._all_to_all_single(output, input)

    def _all_to_all_single(self, output, input):
        _backend()

    def broadcast(self, input_, src=0):
        _backend()
        return input_

    def send(self, tensor, dst=None):
        _backend()

    def recv(self, size, dtype, src=None):
        _backend()
        return torch.zeros(size, dtype=dtype)
'''


def _fake_sglang(root: pathlib.Path) -> None:
    for d in ("sglang", "sglang/srt", "sglang/srt/distributed"):
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "__init__.py").write_text("")
    (root / "sglang/srt/distributed/parallel_state.py").write_text(SGLANG_PARALLEL_STATE)


@pytest.fixture
def fake_sglang(tmp_path, monkeypatch):
    _fake_sglang(tmp_path / "engine")
    monkeypatch.syspath_prepend(str(tmp_path / "engine"))
    yield
    for name in [n for n in sys.modules if n == "sglang" or n.startswith("sglang.")]:
        del sys.modules[name]


def test_sglang_coordinator_is_wrapped_when_imported_and_written_once_a_call(world1, fake_sglang, tmp_path):
    trace.install(tmp_path / "t", rank=1, engine="sglang")
    assert "sglang.srt.distributed.parallel_state" not in sys.modules
    from sglang.srt.distributed import parallel_state  # wrapped as it is imported

    GroupCoordinator = parallel_state.GroupCoordinator
    assert getattr(GroupCoordinator.all_reduce, "__seam_trace__", False)
    tp = GroupCoordinator([2, 1], 1)
    tp.all_reduce(torch.ones(3, 4, dtype=torch.bfloat16))
    parallel_state.inplace_all_reduce(torch.ones(5), "tp:0")  # a compiled graph's custom op, without all_reduce
    assert tp.fused_allreduce_rmsnorm(torch.ones(6, 4), torch.ones(6, 4), torch.ones(4), 1e-6) is None
    tp.ca_comm = object()
    with trace.tag("layer 0 exit"):
        tp.fused_allreduce_rmsnorm(torch.ones(6, 4), torch.ones(6, 4), torch.ones(4), 1e-6)
    tp.reduce_scatter_tensor(torch.empty(2), torch.ones(4))
    tp.reduce_scatter(torch.empty(2, 3), [torch.ones(2, 3), torch.ones(2, 3)])
    tp.all_gather_into_tensor(torch.empty(8), torch.ones(4))
    assert tp.all_gather(torch.ones(2, 5), dim=0).shape == (4, 5)  # its all_gather_into_tensor: not again
    tp.all_gatherv(torch.ones(3, 2), sizes=[3, 1])
    tp.reduce_scatterv(torch.ones(4, 2), sizes=[2, 2])
    tp.all_to_all_single(torch.empty(6, dtype=torch.int32), torch.ones(6, dtype=torch.int32))
    tp.broadcast(torch.ones(7), src=1)
    tp.send(torch.ones(8), dst=0)
    tp.recv(torch.Size([9]), torch.int64, src=0)
    GroupCoordinator([1], 1, "tp:1").all_to_all_single(torch.empty(2), torch.ones(2))  # one rank: a copy

    assert read_trace(tmp_path / "t" / "seam-trace.1.jsonl") == [
        line(1, "all_reduce", [2, 1], [3, 4], "bfloat16", "sum"),
        line(1, "all_reduce", [2, 1], [5], "float32", "sum"),
        line(1, "all_reduce", [2, 1], [6, 4], "float32", "sum", tag="layer 0 exit"),
        line(1, "reduce_scatter", [2, 1], [4], "float32", "sum"),
        line(1, "reduce_scatter", [2, 1], [4, 3], "float32", "sum"),
        line(1, "all_gather", [2, 1], [4], "float32"),
        line(1, "all_gather", [2, 1], [2, 5], "float32"),
        line(1, "all_gather", [2, 1], [3, 2], "float32"),
        line(1, "reduce_scatter", [2, 1], [4, 2], "float32", "sum"),
        line(1, "all_to_all", [2, 1], [6], "int32"),
        line(1, "broadcast", [2, 1], [7], "float32", peer=1),
        line(1, "send", [2, 1], [8], "float32", peer=2),
        line(1, "recv", [2, 1], [9], "int64", peer=2),
    ]
    trace.uninstall()
    assert not hasattr(GroupCoordinator.all_reduce, "__seam_trace__")
    tp.all_reduce(torch.ones(10))
    assert len((tmp_path / "t" / "seam-trace.1.jsonl").read_text().splitlines()) == 13


def test_an_engine_not_installed_is_said_and_torch_is_still_traced(world1, tmp_path):
    if "vllm" in sys.modules or __import__("importlib").util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    with pytest.warns(RuntimeWarning, match="vllm is not importable"):
        trace.install(tmp_path, engine="vllm")
    dist.all_reduce(torch.ones(2))
    assert read_trace(tmp_path / "seam-trace.0.jsonl") == [line(0, "all_reduce", [0], [2], "float32", "sum")]


def test_cpu_false_leaves_out_calls_on_cpu_tensors(world1, tmp_path):
    trace.install(tmp_path, cpu=False)
    dist.all_reduce(torch.ones(2))
    assert list(tmp_path.iterdir()) == []  # nothing written: the file is not even made


def test_a_file_already_there_is_kept_and_the_lines_go_beside_it(world1, tmp_path):
    (tmp_path / "seam-trace.0.jsonl").write_text("earlier\n")
    trace.install(tmp_path)
    with pytest.warns(RuntimeWarning, match="is there already"):
        dist.broadcast(torch.ones(3), src=0)
    assert (tmp_path / "seam-trace.0.jsonl").read_text() == "earlier\n"
    assert read_trace(tmp_path / f"seam-trace.0.{os.getpid()}.jsonl") == [
        line(0, "broadcast", [0], [3], "float32", peer=0)]


def test_a_file_name_with_rank_and_reductions_torch_names(world1, tmp_path):
    trace.install(tmp_path / "sub" / "r{rank}.jsonl")
    dist.all_reduce(torch.ones(2, dtype=torch.int8), op=dist.ReduceOp.BAND)
    lines = (tmp_path / "sub" / "r0.jsonl").read_text().splitlines()
    # A reduction seam does not read is written as torch names it (seam refuses that line).
    assert [json.loads(s) for s in lines] == [line(0, "all_reduce", [0], [2], "int8", "band")]
    assert trace._reduce_name(dist.ReduceOp.PREMUL_SUM) == "sum"  # a sum of pre-scaled inputs
    assert trace._reduce_name(dist.ReduceOp.PRODUCT) == "prod"


def test_installing_again_replaces_and_uninstall_restores(world1, tmp_path):
    before = dist.all_reduce
    trace.install(tmp_path / "a")
    trace.install(tmp_path / "b")
    assert dist.all_reduce.__wrapped__ is before  # not a wrapper of a wrapper
    dist.all_reduce(torch.ones(1))
    trace.uninstall()
    trace.uninstall()
    assert dist.all_reduce is before and dist.distributed_c10d.all_reduce is before
    assert not (tmp_path / "a" / "seam-trace.0.jsonl").exists()
    assert len(read_trace(tmp_path / "b" / "seam-trace.0.jsonl")) == 1


def test_isend_and_irecv_wrapped_are_still_the_ops_p2pop_takes(world1, tmp_path):
    isend, irecv = dist.isend, dist.irecv
    made_before = dist.P2POp(isend, torch.ones(1), 0)
    trace.install(tmp_path)
    assert dist.isend is not isend and dist.isend == isend and isend == dist.isend and dist.irecv == irecv
    assert dist.isend != irecv and dist.distributed_c10d.isend is dist.isend
    dist.P2POp(isend, torch.ones(1), 0)  # torch's check: op in [isend, irecv]
    made_under = dist.P2POp(dist.irecv, torch.ones(1), 0)
    trace.uninstall()
    assert made_under.op == dist.irecv and made_before.op == dist.isend


def test_a_forked_process_writes_its_own_file(tmp_path):
    writer = trace._Writer(str(tmp_path), None)
    assert writer.open_for(lambda: 0) == 0
    writer.write(b"parent\n")
    pid = os.fork()
    if pid == 0:  # the child: its own rank, its own file
        code = 0 if writer.open_for(lambda: 5) == 5 else 1
        writer.write(b"child\n")
        os._exit(code)
    assert os.waitpid(pid, 0)[1] == 0
    writer.write(b"parent again\n")
    writer.close()
    assert (tmp_path / "seam-trace.0.jsonl").read_text() == "parent\nparent again\n"
    assert (tmp_path / "seam-trace.5.jsonl").read_text() == "child\n"


def test_a_file_where_the_folder_would_be_is_refused(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(seam.BadInput, match="is not a folder"):
        trace.install(tmp_path / "f")


def test_tags_are_cut_at_256_utf8_bytes_and_checked():
    with trace.tag("é" * 200):
        assert trace.get_tag() == "é" * 128
    with trace.tag("a" * 255 + "é"):
        assert trace.get_tag() == "a" * 255  # a character cut in two is dropped
    trace.set_tag("x\ud800y")
    assert trace.get_tag() == "x?y"  # a lone surrogate is no UTF-8
    trace.set_tag(None)
    assert trace.get_tag() == ""
    with pytest.raises(seam.BadInput, match="a tag must be a str"):
        trace.set_tag(5)


def test_bad_arguments_are_refused():
    with pytest.raises(seam.BadInput, match="engine='trt' is not one of vllm, sglang"):
        trace.install("/tmp/unused", engine="trt")
    with pytest.raises(seam.BadInput, match="rank=-1"):
        trace.install("/tmp/unused", rank=-1)
    with pytest.raises(seam.BadInput, match="SEAM_TRACE_ENGINE='trt'"):
        trace.install_from_env({"SEAM_TRACE": "/tmp/unused", "SEAM_TRACE_ENGINE": "trt"})
    assert trace.install_from_env({}) is False


def test_the_hook_dir_traces_a_process_started_with_seam_trace(tmp_path):
    """The sitecustomize hook in an interpreter that cannot import the
    package seam (only the hook's folder on PYTHONPATH): it loads the hook's
    file, imports nothing until torch is imported, wraps a fake SGLang when
    it is imported, and runs the sitecustomize it hides."""
    out = subprocess.run([sys.executable, "-m", "seam.trace", "--hook-dir"], capture_output=True, text=True,
                         check=True).stdout
    hook = pathlib.Path(out.strip())
    assert hook == pathlib.Path(trace.hook_dir()) and (hook / "sitecustomize.py").is_file()
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['SEAM_TEST_CHAINED'] = 'yes'\n")
    _fake_sglang(tmp_path / "engine")
    script = textwrap.dedent(f"""
        import json, os, sys
        facts = {{"torch before": "torch" in sys.modules, "chained": os.environ.get("SEAM_TEST_CHAINED")}}
        import torch, torch.distributed as dist
        dist.init_process_group("gloo", init_method="file://{tmp_path}/store", rank=0, world_size=1)
        dist.all_gather([torch.empty(2, 3)], torch.ones(2, 3))
        from sglang.srt.distributed.parallel_state import GroupCoordinator
        GroupCoordinator([0, 5], 0).all_reduce(torch.ones(4, dtype=torch.bfloat16))
        facts["hook"] = sys.modules["seam.trace"].__file__
        print(json.dumps(facts))
    """)
    env = dict(_gloo_env(), PYTHONPATH=os.pathsep.join([str(hook), str(other), str(tmp_path / "engine")]),
               SEAM_TRACE=str(tmp_path / "t"), SEAM_TRACE_ENGINE="sglang")
    p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    facts = json.loads(p.stdout.splitlines()[-1])
    assert facts == {"torch before": False, "chained": "yes", "hook": str(hook.parent / "trace.py")}
    assert read_trace(tmp_path / "t" / "seam-trace.0.jsonl") == [
        line(0, "all_gather", [0], [2, 3], "float32"),
        line(0, "all_reduce", [0, 5], [4], "bfloat16", "sum"),
    ]


def test_without_seam_trace_the_hook_installs_nothing(tmp_path):
    env = dict(os.environ, PYTHONPATH=trace.hook_dir())
    env.pop("SEAM_TRACE", None)
    p = subprocess.run([sys.executable, "-c", "import sys; print(sorted(m for m in sys.modules if 'seam' in m))"],
                       env=env, capture_output=True, text=True, timeout=60, check=True)
    assert p.stdout.strip() == "[]", p.stdout
