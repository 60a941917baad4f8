"""seam.verify catches a plan that breaks an invariant, and seam.diff says
what differs, as `seam show` and `seam diff` do."""
import json

import pytest

import seam


def bound():
    return seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a")


def without_first_entry_step(p, stage):
    doc = json.loads(p.to_json())
    del doc["ranks"][0]["lines"][0]["stages"][stage]["entry"][0]
    return seam.Plan.from_json(json.dumps(doc))


def test_a_bound_plan_verifies():
    assert seam.verify(bound()) is None
    assert seam.verify(bound(), against_binder=True) is None


def test_a_plan_missing_its_reduce_scatter_fails_invariant_2():
    broken = without_first_entry_step(bound(), 1)
    with pytest.raises(seam.CheckFailed) as e:
        seam.verify(broken)
    assert e.value.kind == "failed-check" and e.value.exit_status == 1
    assert e.value.violations[0] == ("rank 0 ordinary stage 1 entry[1]: invariant 2 (every owed sum completes once, "
                                     "over its group, before any read): adds a value that still owes a sum over attn_tp")
    assert str(e.value).startswith("the plan breaks its invariants:\n" + e.value.violations[0])


def test_show_refuses_the_same_plan_with_the_same_violations(cli, tmp_path):
    broken = without_first_entry_step(bound(), 1)
    (tmp_path / "broken.json").write_text(broken.to_json())
    code, _, err = cli("show", str(tmp_path / "broken.json"))
    assert code == 1
    with pytest.raises(seam.CheckFailed) as e:
        seam.verify(broken)
    for v in e.value.violations:
        assert v in err


def test_a_valid_plan_that_is_not_the_binders_fails_against_the_binder():
    # The fused completion split into its three steps computes the same bits
    # and breaks no invariant, but it is not what seam binds.
    doc = json.loads(seam.plan("llama", tp=2).to_json())
    entry = doc["ranks"][0]["lines"][0]["stages"][1]["entry"]
    fused = entry[0]
    assert fused["step"] == "ar+add+norm"
    local = dict(fused, operand="residual", group=None, owes=["-", "-"], bytes_per_token=0.0)
    entry[0:1] = [dict(fused, step="ar"), dict(local, step="add"), dict(local, step="norm")]
    p = seam.Plan.from_json(json.dumps(doc))
    seam.verify(p)
    with pytest.raises(seam.CheckFailed) as e:
        seam.verify(p, against_binder=True)
    assert e.value.violations[:3] == [
        "~ ordinary stage 1 entry[0]: ar(attn_tp) value full -> full, owes attn_tp -> -, width 64 != "
        "ar+add+norm(attn_tp) value full -> full, owes attn_tp -> -, width 64",
        "- ordinary stage 1 entry[1]: add residual full -> full, owes - -> -, width 64",
        "- ordinary stage 1 entry[2]: norm residual full -> full, owes - -> -, width 64"]


def test_diff_lists_what_the_command_line_lists(cli, tmp_path):
    a = bound()
    b = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a", pp=2)
    assert seam.diff(a, a) == []
    lines = seam.diff(a, b)
    assert lines
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.txt").write_text(b.to_text())
    code, out, _ = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.txt"))
    assert code == 1
    assert out.splitlines()[:len(lines)] == lines


def test_verify_and_diff_take_plans_only():
    with pytest.raises(seam.BadInput):
        seam.verify("plan.json")
    with pytest.raises(seam.BadInput):
        seam.diff(bound(), None)
