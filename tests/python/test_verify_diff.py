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
    assert not seam.diff(a, a) and seam.diff(a, a).equal and seam.diff(a, a).lines == ()
    lines = list(seam.diff(a, b).lines)
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


def test_diff_returns_each_difference_as_a_record_and_keeps_the_lines(cli, tmp_path):
    a = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a", pp=2)
    b = seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a", pp=2, dp_lm_head=True)
    d = seam.diff(a, b)
    assert isinstance(d, seam.PlanDiff) and d and not d.equal
    assert list(d.lines) == [str(x) for x in d.differences] + [str(x) for x in d.bytes]
    (tmp_path / "a.json").write_text(a.to_json())
    (tmp_path / "b.json").write_text(b.to_json())
    code, out, _ = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert code == 1 and out.splitlines()[:len(d.lines)] == list(d.lines)
    assert {x.kind for x in d} <= {"removed", "added", "changed", "field"}
    config = [x for x in d if x.where == "config"]
    assert len(config) == 2 and {x.rank for x in config} == {0, 1} and all(x.kind == "field" for x in config)
    assert "dp-lm-head" not in config[0].first and "dp-lm-head" in config[0].second
    head = next(x for x in d if x.kind == "changed")
    assert (head.rank, head.where) == (1, "ordinary lm-head[0]")
    assert head.first.startswith("ag(dp) input attn -> full") and head.second.startswith("lm-head input attn")
    assert str(head) == f"rank 1: ~ ordinary lm-head[0]: {head.first} != {head.second}"
    total = [x for x in d.bytes if x.rank is None]
    assert [x.variant for x in total] == ["ordinary"]
    assert total[0].first == a.bytes_per_token() and total[0].second == b.bytes_per_token()
    assert [(x.rank, x.first) for x in d.bytes if x.rank is not None] == [
        (r, a.ranks[r].bytes_per_token()) for r in range(2)]


def test_diff_names_what_only_one_plan_has_as_removed_or_added():
    doc = json.loads(seam.plan("llama", tp=2).to_json())
    entry = doc["ranks"][0]["lines"][0]["stages"][1]["entry"]
    fused = entry[0]
    local = dict(fused, operand="residual", group=None, owes=["-", "-"], bytes_per_token=0.0)
    entry[0:1] = [dict(fused, step="ar"), dict(local, step="add"), dict(local, step="norm")]
    split = seam.Plan.from_json(json.dumps(doc))
    d = seam.diff(split, seam.plan("llama", tp=2))
    assert [(x.kind, x.where) for x in d] == [("changed", "ordinary stage 1 entry[0]"),
                                              ("removed", "ordinary stage 1 entry[1]"),
                                              ("removed", "ordinary stage 1 entry[2]")]
    assert d[0].first.startswith("ar(attn_tp) value") and d[0].second.startswith("ar+add+norm(attn_tp) value")
    assert d[1].first == "add residual full -> full, owes - -> -, width 64" and d[1].second is None
    assert all(x.rank is None for x in d) and [x.rank for x in d.bytes] == [None]
    back = seam.diff(seam.plan("llama", tp=2), split)
    assert [x.kind for x in back] == ["changed", "added", "added"] and back[1].first is None
    assert back[1].second == d[1].first
    scattered = seam.diff(seam.plan("llama", tp=2), seam.plan("llama", tp=2, input_scattered=True))
    assert [(x.kind, x.where, x.second) for x in scattered if x.kind != "field"] == [
        ("added", "input-scattered", "input-scattered batches")]
