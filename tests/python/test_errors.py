"""Every failure is a seam.Error carrying seam's own message and kind: bad
input (also a ValueError) for what cannot be planned or read, a failed check
for what breaks an invariant. Hostile values are refused, never a crash."""
import json

import pytest

import seam
from conftest import CONFIGS


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
                                  '{"seam_pipeline": 3, "ranks": [{}]}'])
def test_a_malformed_plan_is_bad_input(text):
    with pytest.raises(seam.BadInput) as e:
        seam.Plan.from_json(text)
    assert e.value.kind == "malformed"


def test_the_plan_format_is_versioned():
    doc = json.loads(seam.plan("llama").to_json())
    assert doc["seam_pipeline"] == 3
    doc["seam_pipeline"] = 4
    with pytest.raises(seam.BadInput, match="expected format 3"):
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


def test_stage_and_rule_are_none_where_they_do_not_apply():
    with pytest.raises(seam.BadInput) as e:
        seam.plan("deepseek-v2-lite", tp=4, moe="a2a", ep=3)
    assert e.value.stage is None and e.value.rule is None
    with pytest.raises(seam.BadInput) as e:
        seam.plan("nope")
    assert e.value.stage is None and e.value.rule is None
    assert seam.BadInput("made by hand").stage is None and seam.BadInput("made by hand").rule is None


@pytest.mark.parametrize("keyword,flag,value", [
    ("moe", "--moe", "bogus"),
    ("reduction", "--reduction", "sum"),
    ("act_dtype", "--act-dtype", "fp4"),
    ("dispatch_dtype", "--dispatch-dtype", "int3"),
])
def test_an_unknown_word_is_bad_input_with_the_command_lines_message(cli, keyword, flag, value):
    with pytest.raises(seam.BadInput) as e:
        seam.plan("llama", **{keyword: value})
    assert e.value.kind == "invalid-argument"
    code, _, err = cli("plan", "llama", flag, value)
    assert (code, err) == (2, f"seam: --{e.value}\n".replace(f"--{keyword}:", f"{flag}:"))
    assert str(e.value).startswith(f"{keyword}: unknown ")


def test_pp_split_with_no_counts_is_refused_as_the_command_line_refuses_it(cli):
    with pytest.raises(seam.BadInput) as e:
        seam.plan("llama", pp_split=[])
    code, _, err = cli("plan", "llama", "--pp-split", "")
    assert code == 2
    assert err.startswith("seam: --pp-split: '' is not a list of layer counts like 1+3 or 2,2 (each from 1 to ")
    assert str(e.value).startswith("pp_split=[] " + err[len("seam: --pp-split: '' "):].rstrip("\n"))
    with pytest.raises(seam.BadInput):
        seam.plan("llama", pp_split="1+3")


_SECONDS = {
    "compare max_seconds": lambda v: seam.compare("llama", gpus=2, max_seconds=v),
    "compare_for_engine max_seconds": lambda v: seam.compare_for_engine(
        "sglang", ["--model-path", str(CONFIGS / "deepseek-v2-lite.json"), "--tp-size", "2"], max_seconds=v),
    "run timeout": lambda v: seam.run("llama", tp=2, timeout=v),
    "run max_seconds": lambda v: seam.run("llama", tp=2, max_seconds=v),
}


@pytest.mark.parametrize("where", sorted(_SECONDS))
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 0, 0.0, -1, 1e-9, 86401, 10**400])
def test_every_seconds_argument_refuses_what_the_command_line_refuses(cli, where, value):
    name = where.split()[1]
    with pytest.raises(seam.BadInput) as e:
        _SECONDS[where](value)
    assert str(e.value).startswith(f"{name}=") and str(e.value).endswith(
        " is not a number of seconds from 0.001 to 86400 (a day)")
    assert e.value.kind == "invalid-argument"


@pytest.mark.parametrize("where", sorted(_SECONDS))
@pytest.mark.parametrize("value", [True, "600", None, 1j])
def test_a_seconds_argument_that_is_not_a_number_is_bad_input(where, value):
    with pytest.raises(seam.BadInput, match=f"^{where.split()[1]} must be a number of seconds, not "):
        _SECONDS[where](value)


def test_the_command_line_refuses_the_same_seconds(cli):
    for value in ("nan", "inf", "0", "-1"):
        code, _, err = cli("compare", "llama", "--gpus", "2", "--max-seconds", value)
        assert code == 2 and "is not a number of seconds from 0.001 to 86400 (a day)" in err


_LONE = "\udc80"
_STRINGS = {
    "model": lambda s: seam.plan("llama" + s),
    "moe": lambda s: seam.plan("llama", moe="tp" + s),
    "reduction": lambda s: seam.plan("llama", reduction="ar" + s),
    "act_dtype": lambda s: seam.plan("llama", act_dtype="bf16" + s),
    "dispatch_dtype": lambda s: seam.plan("llama", dispatch_dtype="bf16" + s),
    "engine": lambda s: seam.plan_for_engine("sglang" + s, ["--model-path", "x"]),
    "args[1]": lambda s: seam.plan_for_engine("sglang", ["--model-path", "x" + s]),
    "hardware": lambda s: seam.compare("llama", gpus=2, hardware="h100" + s),
    "weight_dtype": lambda s: seam.compare("llama", gpus=2, weight_dtype="bf16" + s),
    "args[0]": lambda s: seam.compare_for_engine("vllm", ["--model" + s]),
    "dtype": lambda s: seam.run("llama", dtype="fp32" + s),
    "text": lambda s: seam.Plan.from_json("{" + s),
}


@pytest.mark.parametrize("name", sorted(_STRINGS))
def test_a_lone_surrogate_in_a_string_argument_is_bad_input_naming_it(name):
    with pytest.raises(seam.BadInput) as e:
        _STRINGS[name](_LONE)
    assert str(e.value).startswith(f"{name}=") and "lone surrogate '\\udc80'" in str(e.value)


def test_a_path_that_is_not_utf8_names_the_file_it_is():
    # os.fsdecode makes a lone surrogate of a byte that is not UTF-8: the file is still that file.
    with pytest.raises(seam.BadInput) as e:
        seam.plan("/nonexistent/llama" + _LONE + ".json")
    assert "/nonexistent/llama\ufffd.json" in str(e.value)
    with pytest.raises(seam.BadInput, match="^cannot read /nonexistent/p\ufffd.json: no such file$"):
        seam.load("/nonexistent/p" + _LONE + ".json")
    with pytest.raises(seam.BadInput, match="holds a NUL byte"):
        seam.load("p\0.json")
