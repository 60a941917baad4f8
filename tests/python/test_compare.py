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
