"""seam.run: the plans on one thread per rank against the unsharded
reference, the outputs as numpy arrays that agree bit for bit."""
import numpy as np
import pytest

import seam


@pytest.mark.parametrize("kw", [dict(tp=2, pp=2), dict(tp=4, attn_dp=2, dense_tp=1, moe="a2a"),
                                dict(tp=4, attn_dp=2, dp_lm_head=True), dict(tp=8, attn_dp=2, cp=2, pp=2),
                                dict(tp=8, attn_dp=2, dcp=2, pp=2)])
def test_a_run_agrees_with_its_reference_bit_for_bit(kw):
    r = seam.run("deepseek-v2-lite", **kw, tokens=12, requests=3)
    assert r.identical
    assert r.hidden.dtype == np.float32 and r.hidden.shape == (12, 64)
    assert r.logits.shape == (12, 256)
    assert np.array_equal(r.hidden, r.reference) and np.array_equal(r.logits, r.reference_logits)
    assert np.isfinite(r.hidden).all() and np.abs(r.hidden).max() > 0
    # Every row its own: a misrouted row would repeat another.
    assert len({row.tobytes() for row in r.hidden}) == 12


def test_a_run_is_the_command_lines(cli_json):
    r = seam.run("llama", tp=2, pp=2, tokens=8, requests=2, seed=7)
    doc = cli_json("run", "llama", "--tp", "2", "--pp", "2", "--tokens", "8", "--requests", "2", "--seed", "7")
    assert doc["bit_identical"] is True
    assert [rk["bytes_sent"] for rk in doc["ranks"]] == [rk["bytes_sent"] for rk in r.ranks]
    assert [rk["collectives"] for rk in doc["ranks"]] == [rk["collectives"] for rk in r.ranks]


def test_the_seed_draws_the_weights_and_the_batch():
    a = seam.run("llama", tp=2, tokens=4, requests=1, seed=1)
    b = seam.run("llama", tp=2, tokens=4, requests=1, seed=2)
    assert a.identical and b.identical
    assert not np.array_equal(a.hidden, b.hidden)
    assert np.array_equal(a.hidden, seam.run("llama", tp=2, tokens=4, requests=1, seed=1).hidden)


def test_a_dp_group_without_rows_still_runs():
    # One token over four attention-DP groups: three hold no rows and still
    # join every collective.
    r = seam.run("deepseek-v2-lite", tp=4, attn_dp=4, dense_tp=1, moe="a2a", tokens=1, requests=1)
    assert r.identical and r.hidden.shape == (1, 64)


def test_bf16_runs_bit_for_bit_too():
    r = seam.run("qwen3", tp=2, dtype="bf16", tokens=6, requests=2)
    assert r.dtype == "bf16" and r.identical


@pytest.mark.parametrize("kw,message", [
    (dict(dtype="fp8"), None),
    (dict(tokens=0), "tokens=0 must be at least 1"),
    (dict(tokens=1 << 21), "tokens=2097152 is not in [1, 1048576]"),
    (dict(seed=-1), "seed=-1 must be an int in [0, 2**64)"),
    (dict(timeout=0), "timeout=0 is not a number of seconds from 0.001 to 86400 (a day)"),
    (dict(max_memory=1), None),
])
def test_a_bad_run_is_bad_input(kw, message):
    with pytest.raises(seam.BadInput) as e:
        seam.run("llama", tp=2, **kw)
    if message:
        assert str(e.value) == message
