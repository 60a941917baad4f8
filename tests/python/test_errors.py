"""Every failure is a seam.Error carrying seam's own message and kind: bad
input (also a ValueError) for what cannot be planned or read, a failed check
for what breaks an invariant. Hostile values are refused, never a crash."""
import json

import pytest

import seam


def test_a_size_that_does_not_divide_is_bad_input_with_the_binders_message(cli):
    with pytest.raises(seam.BadInput) as e:
        seam.plan("deepseek-v2-lite", tp=4, moe="a2a", ep=3)
    assert str(e.value) == "ep=3 does not divide tp=4; the expert groups split the TP group (divisors of 4: 1, 2, 4)"
    assert e.value.kind == "invalid-argument" and e.value.exit_status == 2
    assert isinstance(e.value, ValueError)
    code, _, err = cli("plan", "deepseek-v2-lite", "--tp", "4", "--moe", "a2a", "--ep", "3")
    assert (code, err) == (2, f"seam: {e.value}\n")


def test_a_rejection_names_its_stage_and_rule():
    with pytest.raises(seam.BadInput) as e:
        seam.plan("gpt-oss", tp=2, attn_dp=2, moe="a2a")
    assert e.value.kind == "unsupported"
    assert e.value.stage == 1
    assert e.value.rule == "a2a MoE needs a dispatch/combine in the model"
    assert str(e.value).endswith("use --moe tp")


def test_an_unknown_model_lists_the_catalogue():
    with pytest.raises(seam.BadInput, match=r"^unknown model 'nope'; the catalogue has: llama, "):
        seam.plan("nope")


def test_a_path_that_is_not_there_is_bad_input():
    with pytest.raises(seam.BadInput) as e:
        seam.plan("/nonexistent/config.json")
    assert "/nonexistent/config.json" in str(e.value)
    with pytest.raises(seam.BadInput, match="^cannot read /nonexistent/p.json: no such file$"):
        seam.load("/nonexistent/p.json")


@pytest.mark.parametrize("kw,message", [
    (dict(tp=0), "tp=0 must be at least 1"),
    (dict(tp=-4), "tp=-4 must be at least 1"),
    (dict(tp=2**40), f"tp={2**40} is too large"),
    (dict(tp=1 << 20), "tp=1048576 is more than 65536 ranks"),
    (dict(tp=True), "tp must be an int, not bool"),
    (dict(tp="4"), "tp must be an int, not str"),
    (dict(tp=2.0), "tp must be an int, not float"),
    (dict(pp_split=[2, "x"]), "pp_split must be an int, not str"),
    (dict(moe="deepep"), None),
    (dict(reduction="sum"), None),
    (dict(act_dtype="fp4"), None),
    (dict(layers=0), "layers=0 must be at least 1"),
    (dict(layers=99), "--layers 99 is more than the 4 layers deepseek-v2-lite declares"),
])
def test_hostile_values_are_bad_input(kw, message):
    with pytest.raises(seam.BadInput) as e:
        seam.plan("deepseek-v2-lite", **kw)
    if message is not None:
        assert str(e.value) == message
    else:
        assert str(e.value)


@pytest.mark.parametrize("model", [None, 42, b"llama", ["llama"]])
def test_a_model_that_is_neither_a_name_nor_a_path_is_bad_input(model):
    with pytest.raises(seam.BadInput, match="model must be a catalogue name or a config.json path"):
        seam.plan(model)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"seam_pipeline": 99, "ranks": []}', "plan x\n", "\x00" * 64,
                                  '{"seam_pipeline": 2, "ranks": [{}]}'])
def test_a_malformed_plan_is_bad_input(text):
    with pytest.raises(seam.BadInput) as e:
        seam.Plan.from_json(text)
    assert e.value.kind == "malformed"


def test_the_plan_format_is_versioned():
    doc = json.loads(seam.plan("llama").to_json())
    assert doc["seam_pipeline"] == 2
    doc["seam_pipeline"] = 3
    with pytest.raises(seam.BadInput, match="expected format 2"):
        seam.Plan.from_json(json.dumps(doc))


def test_a_huge_plan_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)
    with pytest.raises(seam.BadInput, match="big.json"):
        seam.load(big)


def test_the_engine_args_are_a_list():
    with pytest.raises(seam.BadInput, match="list of strings"):
        seam.plan_for_engine("sglang", "--tp-size 8")
    with pytest.raises(seam.BadInput, match="sglang"):
        seam.plan_for_engine("trt", ["--tp-size", "8"])
