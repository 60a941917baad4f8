"""seam.plan: the plan `seam plan` binds, as Python values that mirror its
JSON field for field, printed exactly as the command line prints it."""
import json

import pytest

import seam
from conftest import CONFIGS


def example():
    return seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a")


def test_the_table_is_the_command_lines(cli):
    code, out, _ = cli("plan", "deepseek-v2-lite", "--tp", "4", "--attn-dp", "2", "--dense-tp", "1", "--moe", "a2a")
    assert code == 0
    assert example().table() == out


def test_a_real_config_plans_as_the_command_line_plans_it(cli):
    config = str(CONFIGS / "deepseek-v2-lite.json")
    p = seam.plan(config, tp=8, attn_dp=4, dense_tp=1, moe="a2a", pp=2)
    code, out, _ = cli("plan", "--hf-config", config, "--tp", "8", "--attn-dp", "4", "--dense-tp", "1", "--moe", "a2a",
                       "--pp", "2", "--format", "json")
    assert code == 0
    assert p.to_json() == out
    assert [r.layers for r in p.ranks] == [(0, 13), (13, 27)]  # the later rank holds the extra layer


def _mirror(value, doc, path="plan"):
    """Every field of the JSON document is the same-named field of the value
    (the JSON's "step" is a Step's kind), and the value has no field the JSON
    lacks."""
    if isinstance(doc, dict):
        fields = {("kind" if k == "step" else k) for k in doc}
        if hasattr(value, "__dataclass_fields__"):
            declared = set(value.__dataclass_fields__)
            assert declared - {"kind"} <= fields | {"kind"}, f"{path}: fields without JSON {declared - fields}"
        for key, item in doc.items():
            name = "kind" if key == "step" else key
            if isinstance(value, dict):
                _mirror(value[key], item, f"{path}.{key}")
            else:
                _mirror(getattr(value, name), item, f"{path}.{key}")
    elif isinstance(doc, list):
        assert len(value) == len(doc), path
        for i, (v, d) in enumerate(zip(value, doc)):
            _mirror(v, d, f"{path}[{i}]")
    else:
        assert value == doc, f"{path}: {value!r} != {doc!r}"


@pytest.mark.parametrize("kw", [dict(tp=4, attn_dp=2, dense_tp=1, moe="a2a"),
                                dict(tp=4, attn_dp=2, dp_lm_head=True, reduction="rs"),
                                dict(tp=2, pp=2), dict(tp=2, input_scattered=True, reduction="rs")])
def test_the_values_mirror_the_json_field_for_field(kw):
    p = seam.plan("deepseek-v2-lite", **kw)
    doc = json.loads(p.to_json())
    assert len(p.ranks) == len(doc["ranks"])
    for rank, d in zip(p.ranks, doc["ranks"]):
        d = dict(d)
        del d["seam_plan"]
        _mirror(rank, d)


def test_stages_name_their_collectives_in_order():
    stages = example().ranks[0].line().stages
    assert [(s.index, s.kind) for s in stages[:4]] == [(0, "attention"), (1, "dense-ffn"), (2, "attention"),
                                                         (3, "sparse-ffn")]
    assert [str(s) for s in stages[1].collectives] == ["rs(attn_tp) value attn->slice"]
    assert [str(s) for s in stages[2].collectives] == ["ag(attn_tp) input slice->attn"]
    assert [str(s) for s in stages[3].collectives] == [
        "rs(attn_tp) value attn->slice", "a2a-dispatch(tp) input slice", "a2a-combine(tp) value slice"]


# Written from the design's table of step kinds, apart from the native one
# the package reads: which kinds move data between ranks.
MOVES = {"ar", "rs", "rsv", "ag", "a2a-dispatch", "a2a-combine", "ar+add+norm", "ag-vocab", "send", "recv", "ag-kv",
         "ag-q", "a2a-lse"}
LOCAL = {"slice", "start-residual", "add", "norm", "compute", "embed", "lm-head", "leave"}


def test_a_step_is_collective_exactly_when_its_kind_moves_data():
    seen = set()
    for kw in [dict(tp=4, attn_dp=2, dense_tp=1, moe="a2a", pp=2), dict(tp=2, reduction="rs", pp=2),
               dict(tp=4, cp=2), dict(tp=8, dcp=4)]:
        for rank in seam.plan("deepseek-v2-lite", **kw):
            for step in rank.line().steps:
                assert step.kind in MOVES | LOCAL, step.kind
                assert step.is_collective == (step.kind in MOVES), str(step)
                seen.add(step.kind)
    assert {"leave", "rs", "ag", "a2a-dispatch", "send", "recv", "embed", "ag-vocab", "ag-kv", "ag-q", "a2a-lse"} <= seen


def test_context_parallel_ranks_shard_the_attention_rows_and_gather_the_keys():
    p = seam.plan("llama", tp=8, attn_dp=2, cp=2)
    cfg = p.ranks[0].config
    assert (cfg.tp, cfg.attn_dp, cfg.cp, cfg.attn_tp) == (8, 2, 2, 2)
    attention = p.ranks[0].line().stages[0]
    assert [str(s) for s in attention.collectives] == ["ag-kv(cp) keys attn"]
    with pytest.raises(seam.BadInput, match="a mixer runs its recurrence"):
        seam.plan("nemotron-h", tp=2, cp=2)


def test_decode_context_parallel_attention_gathers_queries_and_exchanges_partials_over_dcp():
    p = seam.plan("deepseek-v2-lite", tp=8, dcp=4)
    cfg = p.ranks[0].config
    assert (cfg.tp, cfg.dcp, cfg.attn_tp) == (8, 4, 8)
    attention = p.ranks[0].line().stages[0]
    # After its entry's all-reduce of the embedding's sum, its compute's two exchanges.
    assert [str(s) for s in attention.collectives] == ["ar(tp) value full", "ag-q(dcp) queries full",
                                                        "a2a-lse(dcp) partials full"]
    with pytest.raises(seam.BadInput, match="attention-TP ranks that hold the same key/value heads"):
        seam.plan("llama", tp=8, dcp=8)


def test_bytes_per_token_is_the_sum_of_the_steps_over_the_ranks():
    p = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a", pp=2)
    assert p.bytes_per_token() == sum(s.bytes_per_token for r in p.ranks for s in r.line().steps)
    assert p.bytes_per_token() == sum(r.line().bytes_per_token for r in p.ranks)
    assert p.bytes_per_token() > 0


def test_json_and_text_read_back_equal():
    p = example()
    assert seam.Plan.from_json(p.to_json()) == p
    assert seam.Plan.from_text(p.to_text()) == p
    assert p != seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a", reduction="rs")


def test_a_plan_file_loads_in_either_form(tmp_path):
    p = example()
    (tmp_path / "p.json").write_text(p.to_json())
    (tmp_path / "p.txt").write_text(p.to_text())
    assert seam.load(tmp_path / "p.json") == p
    assert seam.load(str(tmp_path / "p.txt")) == p


def test_an_input_scattered_plan_has_its_own_line():
    rank = seam.plan("deepseek-v2-lite", tp=2, input_scattered=True, reduction="rs").ranks[0]
    assert [l.variant for l in rank.lines] == ["ordinary", "input-scattered"]
    with pytest.raises(KeyError, match="has no 'nope' line"):
        rank.line("nope")


def test_the_catalogue_is_the_command_lines(cli_json):
    assert [m.name for m in seam.models()] == [m["name"] for m in cli_json("models")["models"]]
    ds = {m.name: m for m in seam.models()}["deepseek-v2-lite"]
    assert ds.real_config == "configs/deepseek-v2-lite.json" and ds.stages.startswith("[A F]")


def test_values_are_frozen():
    rank = example().ranks[0]
    with pytest.raises(AttributeError):
        rank.pp_rank = 3
    with pytest.raises(AttributeError):
        rank.line().stages[0].entry[0].kind = "ar"


def test_pp_split_names_the_pipeline_ranks():
    p = seam.plan("llama", tp=2, pp_split=[1, 3])
    assert [r.layers for r in p.ranks] == [(0, 1), (1, 4)]
    assert all(r.config.pp == 2 and r.config.pp_split == (1, 3) for r in p.ranks)
    with pytest.raises(seam.BadInput):
        seam.plan("llama", tp=2, pp=3, pp_split=[1, 3])
