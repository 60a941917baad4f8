"""seam.compare ranks the configurations `seam compare` ranks."""
import seam


def test_the_ranking_is_the_command_lines(cli_json):
    c = seam.compare("deepseek-v2-lite", gpus=8)
    doc = cli_json("compare", "deepseek-v2-lite", "--gpus", "8", "--top", "100000")
    assert [k.flags for k in c.ranked] == [k["flags"] for k in doc["ranked"]]
    assert [k.decode_seconds for k in c.ranked] == [k["decode_seconds"] for k in doc["ranked"]]
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


def test_gpus_that_do_not_split_over_the_nodes_are_bad_input():
    import pytest
    with pytest.raises(seam.BadInput, match="^--gpus 6 does not split over --nodes 4$"):
        seam.compare("llama", gpus=6, nodes=4)
    with pytest.raises(seam.BadInput, match="^gpus=2048 is not in"):
        seam.compare("llama", gpus=2048)
