"""seam.compare ranks the configurations `seam compare` ranks."""
import json

import pytest

import seam
from conftest import CONFIGS


def test_the_ranking_is_the_command_lines(cli_json):
    c = seam.compare("deepseek-v2-lite", gpus=8)
    doc = cli_json("compare", "deepseek-v2-lite", "--gpus", "8", "--top", "100000")
    assert [k.flags for k in c.ranked] == [k["flags"] for k in doc["ranked"]]
    assert [k.decode_seconds for k in c.ranked] == [k["decode_seconds"] for k in doc["ranked"]]
    assert [k.tokens_per_gpu for k in c.ranked] == [k["tokens_per_gpu"] for k in doc["ranked"]]
    assert [k.step_seconds for k in c.ranked] == [k["step_seconds"] for k in doc["ranked"]]
    fitting = [k.tokens_per_gpu for k in c.ranked if k.fits]
    assert fitting == sorted(fitting, reverse=True)  # the best output per GPU first
    assert c.considered == doc["considered"] and dict(c.rejected) == doc["rejected"]
    assert [k.rank for k in c.ranked] == list(range(1, len(c.ranked) + 1))


def test_each_candidate_binds_as_its_flags_say():
    c = seam.compare("deepseek-v2-lite", gpus=4, hardware="h200")
    for k in c.ranked[:5]:
        cfg = k.config
        p = seam.plan("deepseek-v2-lite", tp=cfg.tp, attn_dp=cfg.attn_dp, dense_tp=cfg.dense_tp, ep=cfg.ep,
                      moe=cfg.moe, reduction=cfg.reduction, input_scattered=cfg.input_scattered,
                      dp_lm_head=cfg.dp_lm_head, pp=cfg.pp)
        assert p.ranks[0].config == cfg
        assert max(r.bytes_per_token() for r in p.ranks) == k.bytes_per_token


def test_gpus_default_to_every_gpu_of_the_nodes_as_the_command_lines(cli_json):
    c = seam.compare("llama", nodes=2)
    doc = cli_json("compare", "llama", "--nodes", "2", "--top", "100000")
    assert c.gpus == 16 and [k.flags for k in c.ranked] == [k["flags"] for k in doc["ranked"]]


def test_hardware_is_a_name_or_a_json_file(tmp_path):
    c = seam.compare("llama", gpus=2)
    (tmp_path / "mine.json").write_text("{")
    for hardware in (tmp_path / "mine.json", str(tmp_path / "mine.json")):
        with pytest.raises(seam.BadInput, match="mine.json"):
            seam.compare("llama", gpus=2, hardware=hardware)
    with pytest.raises(seam.BadInput, match=r"^cannot read /nonexistent/h\ufffd.json"):
        seam.compare("llama", gpus=2, hardware="/nonexistent/h\udc80.json")
    assert c.hardware == seam.compare("llama", gpus=2, hardware="h100").hardware


def test_gpus_that_do_not_split_over_the_nodes_are_bad_input():
    import pytest
    with pytest.raises(seam.BadInput, match="^--gpus 6 does not split over --nodes 4$"):
        seam.compare("llama", gpus=6, nodes=4)
    with pytest.raises(seam.BadInput, match="^gpus=2048 is not in"):
        seam.compare("llama", gpus=2048)


_SGLANG = ["--model-path", str(CONFIGS / "deepseek-v2-lite.json"), "--tp-size", "4", "--enable-dp-attention",
           "--dp-size", "2", "--moe-dense-tp-size", "1"]


def engine_json(cli, *args):
    code, out, err = cli("compare", "--engine", "sglang", "--format", "json", "--top", "100000", *args, "--", *_SGLANG)
    assert code == 0, err
    return json.loads(out)


def test_compare_for_engine_ranks_as_the_command_line_with_an_engines_flags(cli):
    c = seam.compare_for_engine("sglang", _SGLANG)
    doc = engine_json(cli)
    assert c.gpus == 4 and c.model == doc["model"]
    assert [k.flags for k in c.ranked] == [k["flags"] for k in doc["ranked"]]
    assert c.engine == seam.EngineRank(**doc["engine"])
    assert c.engine.name == "sglang" and c.engine.flags == "--tp 4 --attn-dp 2 --dense-tp 1"
    assert c.ranked[c.engine.rank - 1].flags.startswith("--tp 4 --attn-dp 2 --dense-tp 1")
    assert seam.compare("deepseek-v2-lite", gpus=4).engine is None


def test_compare_for_engine_takes_the_gpus_and_refuses_what_the_engine_refuses(cli):
    c = seam.compare_for_engine("sglang", _SGLANG, gpus=8)
    doc = engine_json(cli, "--gpus", "8")
    assert c.gpus == 8 and [k.flags for k in c.ranked] == [k["flags"] for k in doc["ranked"]]
    assert c.engine.rank == doc["engine"]["rank"]
    with pytest.raises(seam.BadInput, match="^SGLang refuses this at start-up"):
        seam.compare_for_engine("sglang", ["--model-path", str(CONFIGS / "deepseek-v2-lite.json"), "--tp-size", "8",
                                           "--enable-dp-attention", "--dp-size", "3"])
    with pytest.raises(seam.BadInput, match="^engine: "):
        seam.compare_for_engine("trt", _SGLANG)
    with pytest.raises(seam.BadInput, match="^args is the engine's command line"):
        seam.compare_for_engine("sglang", " ".join(_SGLANG))


# A request's lengths and targets, as the keywords and as seam compare's flags.
_LLAMA_8B = CONFIGS / "llama-3.1-8b.json"
_REQUEST = {"isl": 500, "osl": 200, "ttft_ms": 6, "tpot_ms": 12.5}
_REQUEST_FLAGS = ["--isl", "500", "--osl", "200", "--ttft", "6", "--tpot", "12.5"]
_WORKLOAD_FIELDS = ("batch", "prefill", "context", "best_batch")


def _same_candidates(c, doc):
    """Each candidate of the package's comparison is the command line's, in the same order."""
    assert len(c.ranked) == len(doc["ranked"])
    for k, d in zip(c.ranked, doc["ranked"]):
        assert (k.rank, k.flags, k.replicas) == (d["rank"], d["flags"], d["replicas"])
        assert (k.batch, k.tokens_per_gpu, k.step_seconds, k.ttft_seconds) == (
            d["batch"], d["tokens_per_gpu"], d["step_seconds"], d["ttft_seconds"])
        assert (k.meets, k.fits, k.decode_seconds) == (d["meets"], d["fits"], d["decode_seconds"])


def test_a_requests_lengths_and_targets_rank_as_the_command_line(cli_json):
    c = seam.compare(_LLAMA_8B, gpus=4, **_REQUEST)
    doc = cli_json("compare", "--hf-config", str(_LLAMA_8B), "--gpus", "4", *_REQUEST_FLAGS, "--top", "100000")
    _same_candidates(c, doc)
    assert {f: getattr(c, f) for f in _WORKLOAD_FIELDS} == {f: doc[f] for f in _WORKLOAD_FIELDS}
    assert c.targets == seam.Targets(**doc["targets"])
    # The prompt is the prefill; a sequence caches it and half the output; the targets are in seconds.
    assert (c.prefill, c.context, c.best_batch) == (500, 600, True)
    assert c.targets == seam.Targets(ttft_seconds=0.006, tpot_seconds=0.0125, osl=200)
    # Each configuration at its own best batch: not all at the default's 64; those past a target rank last.
    assert len({k.batch for k in c.ranked}) > 1 and any(k.batch > 64 for k in c.ranked)
    meets = [k.meets for k in c.ranked]
    assert any(meets) and not all(meets) and meets == sorted(meets, reverse=True)
    assert all(k.tpot_seconds <= 0.0125 and k.ttft_seconds <= 0.006 for k in c.ranked if k.meets)


def test_lengths_alone_search_the_best_batch_and_a_batch_given_is_not_searched(cli_json):
    flags = ["--hf-config", str(_LLAMA_8B), "--gpus", "4", "--isl", "500", "--osl", "200", "--top", "100000"]
    best = seam.compare(_LLAMA_8B, gpus=4, isl=500, osl=200)
    _same_candidates(best, cli_json("compare", *flags))
    assert best.best_batch and any(k.batch != 64 for k in best.ranked)
    for batch in (8, 64):  # 64 is the default's batch: given, it is still run as given
        fixed = seam.compare(_LLAMA_8B, gpus=4, isl=500, osl=200, batch=batch)
        doc = cli_json("compare", *flags, "--batch", str(batch))
        _same_candidates(fixed, doc)
        assert not fixed.best_batch and not doc["best_batch"] and fixed.batch == batch
        assert {k.batch for k in fixed.ranked} == {batch}
        assert (fixed.prefill, fixed.context, fixed.targets.osl) == (500, 600, 200)


def test_without_lengths_or_targets_the_batch_is_64_and_the_prompt_4096(cli_json):
    c = seam.compare("llama", gpus=2)
    doc = cli_json("compare", "llama", "--gpus", "2", "--top", "100000")
    _same_candidates(c, doc)
    assert (c.batch, c.prefill, c.context, c.best_batch, c.targets) == (64, 4096, 4096, False, seam.Targets())
    assert {k.batch for k in c.ranked} == {64}
    c = seam.compare("llama", gpus=2, batch=8, prefill=100, context=300)
    doc = cli_json("compare", "llama", "--gpus", "2", "--batch", "8", "--prefill", "100", "--context", "300",
                   "--top", "100000")
    _same_candidates(c, doc)
    assert (c.batch, c.prefill, c.context, c.best_batch) == (8, 100, 300, False)


def test_compare_for_engine_takes_a_requests_lengths_and_targets(cli):
    c = seam.compare_for_engine("sglang", _SGLANG, **_REQUEST)
    doc = engine_json(cli, *_REQUEST_FLAGS)
    _same_candidates(c, doc)
    assert c.best_batch and c.targets == seam.Targets(**doc["targets"]) and c.engine.rank == doc["engine"]["rank"]


_MILLIS = " is not a number of milliseconds above 0 and at most a day"
_EXCLUDES_TARGET = ": a latency target runs each configuration at its best batch"
_EXCLUDES_CACHE = ": a request's lengths say what each sequence caches"


@pytest.mark.parametrize("keywords,message", [
    ({"isl": 0}, "isl=0 must be at least 1"),
    ({"osl": -3}, "osl=-3 must be at least 1"),
    ({"isl": 1 << 20 | 1}, "isl=1048577 is not in [1, 1048576]"),
    ({"osl": 1 << 20 | 1}, "osl=1048577 is not in [1, 1048576]"),
    ({"isl": 1.5}, "isl must be an int, not float"),
    ({"ttft_ms": 0}, "ttft_ms=0" + _MILLIS),
    ({"tpot_ms": -1.5}, "tpot_ms=-1.5" + _MILLIS),
    ({"tpot_ms": float("nan")}, "tpot_ms=nan" + _MILLIS),
    ({"ttft_ms": float("inf")}, "ttft_ms=inf" + _MILLIS),
    ({"ttft_ms": 10**400}, "ttft_ms=inf" + _MILLIS),
    ({"tpot_ms": 86_400_001}, "tpot_ms=86400001" + _MILLIS),
    ({"ttft_ms": "50"}, "ttft_ms must be a number of milliseconds, not str"),
    ({"tpot_ms": True}, "tpot_ms must be a number of milliseconds, not bool"),
    ({"batch": 8, "ttft_ms": 500}, "batch excludes ttft_ms" + _EXCLUDES_TARGET),
    ({"batch": 8, "tpot_ms": 50}, "batch excludes tpot_ms" + _EXCLUDES_TARGET),
    ({"prefill": 8, "isl": 1000}, "prefill excludes isl: a request's input tokens are its prefill"),
    ({"context": 8, "isl": 1000}, "context excludes isl" + _EXCLUDES_CACHE),
    ({"context": 8, "osl": 1000}, "context excludes osl" + _EXCLUDES_CACHE),
])
def test_a_bad_length_or_target_is_bad_input_with_its_message(keywords, message):
    for call in (lambda: seam.compare("llama", gpus=2, **keywords),
                 lambda: seam.compare_for_engine("sglang", _SGLANG, **keywords)):
        with pytest.raises(seam.BadInput) as e:
            call()
        assert str(e.value) == message and e.value.kind == "invalid-argument"


@pytest.mark.parametrize("keyword,flag", [("ttft_ms", "--ttft"), ("tpot_ms", "--tpot")])
def test_the_milliseconds_refused_are_the_command_lines(cli, keyword, flag):
    for value, text in ((0, "0"), (-1, "-1"), (86_400_001, "86400001")):
        with pytest.raises(seam.BadInput) as e:
            seam.compare("llama", gpus=2, **{keyword: value})
        code, _, err = cli("compare", "llama", "--gpus", "2", flag, text)
        assert (code, err) == (2, f"seam: {flag}: '{text}'{_MILLIS}\n")
        assert str(e.value) == f"{keyword}={text}{_MILLIS}"
    # A day is the most a target may be.
    assert seam.compare("llama", gpus=2, **{keyword: 86_400_000}).best_batch


def test_an_objective_and_the_frontier_are_the_command_lines(cli_json):
    c = seam.compare(_LLAMA_8B, gpus=4, isl=500, osl=200, objective="latency", pareto=True)
    doc = cli_json("compare", "--hf-config", str(_LLAMA_8B), "--gpus", "4", "--isl", "500", "--osl", "200",
                   "--objective", "latency", "--pareto", "--top", "100000")
    _same_candidates(c, doc)
    assert c.objective == doc["objective"] == "latency"
    assert [(k.flags, k.replicas, k.batch, k.tokens_per_gpu, k.tpot_seconds) for k in c.frontier] == [
        (k["flags"], k["replicas"], k["batch"], k["tokens_per_gpu"], k["tpot_seconds"]) for k in doc["frontier"]]
    # Each point faster for a user and slower per GPU than the next; the ranking by TPOT.
    assert len(c.frontier) > 2
    assert all(a.tpot_seconds <= b.tpot_seconds and a.tokens_per_gpu < b.tokens_per_gpu
               for a, b in zip(c.frontier, c.frontier[1:]))
    fitting = [k.tpot_seconds for k in c.ranked if k.fits]
    assert fitting == sorted(fitting)
    assert seam.compare(_LLAMA_8B, gpus=4, isl=500, osl=200).frontier is None


@pytest.mark.parametrize("keywords, message", [
    ({"objective": "cheap"}, "'cheap' is not an objective: throughput (output tokens a second per GPU), latency "
                             "(per user) or ttft (time to the first token)"),
    ({"pareto": 1}, "pareto must be True or False, not int"),
])
def test_a_bad_objective_or_pareto_is_bad_input(keywords, message):
    with pytest.raises(seam.BadInput) as e:
        seam.compare(_LLAMA_8B, gpus=4, **keywords)
    assert message in str(e.value)
