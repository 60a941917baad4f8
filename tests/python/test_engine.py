"""What an engine's own test suite does with seam: take the configuration its
launcher flags imply, bind the plan, and assert the collectives at each
boundary, so that a change to the engine's flags or to its model code that
moves a collective fails in CI instead of on GPUs."""
import collections

import pytest

import seam
from conftest import CONFIGS

DEEPSEEK = str(CONFIGS / "deepseek-v2-lite.json")


def boundaries(plan, pp_rank=0):
    """stage kind -> the distinct collective sequences at its boundaries."""
    out = collections.defaultdict(set)
    for stage in plan.ranks[pp_rank].line().stages:
        out[stage.kind].add(tuple(str(s) for s in stage.collectives))
    return dict(out)


def test_sglang_dp_attention_with_deepep_moe():
    # python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V2-Lite --tp-size 8
    #   --enable-dp-attention --dp-size 4 --moe-dense-tp-size 1 --moe-a2a-backend deepep
    plan = seam.plan_for_engine("sglang", ["--model-path", DEEPSEEK, "--tp-size", "8", "--enable-dp-attention",
                                           "--dp-size", "4", "--moe-dense-tp-size", "1", "--moe-a2a-backend", "deepep"])
    assert plan.engine.seam_flags == "--tp 8 --attn-dp 4 --dense-tp 1 --moe a2a --dispatch-dtype fp8"
    config = plan.ranks[0].config
    assert (config.tp, config.attn_tp, config.dense_tp, config.ep) == (8, 2, 1, 8)
    seam.verify(plan)
    b = boundaries(plan)
    # The dense FFN runs on each rank's slice of its DP group's rows: the
    # attention's partial sum completes straight onto the slice.
    assert b["dense-ffn"] == {("rs(attn_tp) value attn->slice",)}
    # Every MoE layer completes attention's sum onto the slice, then
    # dispatches and combines over the expert group; the last gathers the
    # residual back for the final norm.
    moe = ("rs(attn_tp) value attn->slice", "a2a-dispatch(tp) input slice", "a2a-combine(tp) value slice")
    assert b["sparse-ffn"] == {moe, moe + ("ag(attn_tp) residual slice->attn",)}
    # Attention gathers its DP group's rows back from the slices (the first
    # layer reads the embedding, which is whole under DP attention).
    assert b["attention"] == {(), ("ag(attn_tp) input slice->attn",)}
    head = plan.ranks[0].line().end.head
    assert [str(s) for s in head] == ["ag(dp) input attn->full", "lm-head input full", "ag-vocab(tp) logits full",
                                      "slice logits full->attn"]


def test_sglang_dp_lm_head_keeps_the_head_on_the_dp_group():
    plan = seam.plan_for_engine("sglang", ["--model-path", DEEPSEEK, "--tp-size", "8", "--enable-dp-attention",
                                           "--dp-size", "4", "--enable-dp-lm-head"])
    head = [str(s) for s in plan.ranks[0].line().end.head]
    assert head == ["lm-head input attn", "ag-vocab(attn_tp) logits attn"]
    assert not any(s.group == "dp" for s in plan.ranks[0].line().end.head)


def test_vllm_expert_parallel_under_data_parallel():
    # vllm serve deepseek-ai/DeepSeek-V2-Lite --tensor-parallel-size 2 --data-parallel-size 4 --enable-expert-parallel
    plan = seam.plan_for_engine("vllm", [DEEPSEEK, "--tensor-parallel-size", "2", "--data-parallel-size", "4",
                                         "--enable-expert-parallel"])
    config = plan.ranks[0].config
    assert (config.tp, config.attn_dp, config.dense_tp, config.moe, config.dp_lm_head) == (8, 4, 2, "tp", True)
    assert any("per data-parallel rank" in n for n in plan.engine.notes)
    b = boundaries(plan)
    # Each MoE layer gathers every DP group's rows to the whole group and
    # completes its partial sum over it.
    assert all(seq[-2:] == ("ag(dp) input attn->full", "ar(tp) value full") for seq in b["sparse-ffn"])


def test_a_pipeline_hands_off_the_value_and_the_residual():
    plan = seam.plan_for_engine("sglang", ["--model-path", DEEPSEEK, "--tp-size", "4", "--pp-size", "2"])
    first, second = plan.ranks
    assert first.line().end.kind == "send" and second.line().end.kind == "final"
    # Each rank of the TP group sends its slice of both, and the receiver
    # gathers them back: the wire carries 1/tp of the rows.
    assert [str(s) for s in first.line().end.steps] == [
        "slice value full->slice", "slice residual full->slice", "send(pp) value slice", "send(pp) residual slice"]
    assert [str(s) for s in second.line().start] == [
        "recv(pp) value slice", "recv(pp) residual slice", "ag(attn_tp) value slice->full",
        "ag(attn_tp) residual slice->full"]


def test_a_configuration_the_engine_refuses_is_bad_input_naming_the_engine():
    with pytest.raises(seam.BadInput, match="^SGLang refuses this at start-up"):
        seam.plan_for_engine("sglang", ["--model-path", DEEPSEEK, "--tp-size", "8", "--enable-dp-attention",
                                        "--dp-size", "3"])
