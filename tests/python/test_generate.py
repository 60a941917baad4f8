"""seam.generate: requests served as engines serve them (prefill, decode,
chunks, mixed steps, attention-DP placement), every token fed equal to the
teacher-forced reference bit for bit."""
import numpy as np
import pytest

import seam


@pytest.mark.parametrize("kw", [dict(tp=2, attn_dp=2, chunk=3, mixed=True), dict(tp=2, pp=2, chunk=2),
                                dict(tp=4, attn_dp=2, moe="a2a", dtype="bf16"), dict(tp=8, dcp=4, chunk=3, mixed=True)])
def test_a_generation_agrees_with_its_teacher_forced_reference(kw):
    g = seam.generate("deepseek-v2-lite", **kw, requests=[(5, 4), (3, 6, 1), (7, 2)])
    assert g.identical
    assert [len(t) for t in g.tokens] == [4, 6, 2]
    fed = (5 + 4 - 1) + (3 + 6 - 1) + (7 + 2 - 1)
    assert g.hidden.shape == (fed, 64) and g.logits.shape == (fed, 256)
    assert np.array_equal(g.hidden, g.reference) and np.array_equal(g.logits, g.reference_logits)
    # Each generated token is its row's greedy choice: the last prompt row's
    # logits choose the first token.
    assert g.tokens[0][0] == int(np.argmax(g.logits[4]))
    assert g.peak_cache_bytes > 0 and g.steps > 0


def test_a_generation_is_the_command_lines(cli_json):
    g = seam.generate("llama", tp=2, attn_dp=2, requests=[(5, 3), (2, 4, 1)], chunk=2, mixed=True, seed=3)
    doc = cli_json("run", "llama", "--tp", "2", "--attn-dp", "2", "--requests", "5:3,2:4@1", "--generate", "1",
                   "--chunk", "2", "--mixed", "--seed", "3")
    assert doc["kind"] == "generation" and doc["bit_identical"] is True
    assert [tuple(r["tokens"]) for r in doc["requests"]] == list(g.tokens)
    assert [r["dp_group"] for r in doc["requests"]] == list(g.groups)
    assert [rk["bytes_sent"] for rk in doc["ranks"]] == [rk["bytes_sent"] for rk in g.ranks]
    assert doc["steps"]["count"] == g.steps


def test_a_request_gets_the_same_tokens_whatever_else_is_served():
    alone = seam.generate("qwen3-moe", requests=[(6, 5)], seed=4)
    crowded = seam.generate("qwen3-moe", tp=4, attn_dp=2, requests=[(3, 2), (6, 5), (9, 3, 1)], chunk=2, mixed=True,
                            seed=4)
    # The second request's prompt is drawn after the first's: the same ids
    # only when it comes first, so compare a request drawn first in both.
    first = seam.generate("qwen3-moe", tp=4, attn_dp=2, requests=[(6, 5), (3, 2), (9, 3, 1)], chunk=2, mixed=True,
                          seed=4)
    assert alone.tokens[0] == first.tokens[0]
    assert np.array_equal(alone.logits[:10], first.logits[:10])
    assert crowded.identical


@pytest.mark.parametrize("kw, message", [
    (dict(requests=[]), "requests=[] must be a count or a non-empty list"),
    (dict(requests=[(3,)]), "requests[0]=(3,) must be (prompt, output) or (prompt, output, arrival)"),
    (dict(requests=[(0, 2)]), "requests[0] prompt"),
    (dict(requests=[(2, 2, -1)]), "requests[0] arrival"),
    (dict(output=0), "output"),
    (dict(chunk=0), "chunk"),
    (dict(mixed="yes"), "mixed='yes' must be a bool"),
    (dict(requests=[(1048576, 1)]), "requests of more than 1048576 tokens in all"),
])
def test_bad_arguments_are_bad_input(kw, message):
    with pytest.raises(seam.BadInput, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        seam.generate("llama", **kw)


def test_the_readmes_example_prints_what_it_says():
    import ast
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    call, said = re.search(r"^(g = seam\.generate\(.*\))\n.*\n# (\(True.*\))$", readme, re.M).groups()
    scope = {"seam": seam}
    exec(call, scope)
    g = scope["g"]
    assert (g.identical, g.tokens, g.groups, g.hidden.shape) == ast.literal_eval(said)
