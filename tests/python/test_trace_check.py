"""seam check on a real torch.distributed run: four gloo processes call, in
torch.distributed with seam.trace installed, the collectives seam's plan for
Llama at tp 2, pp 2 makes; seam check reads the hook's lines and finds every
rank matches its plan (exit 0). The same run with the second pipeline rank
completing again what it received is reported on those ranks, at the
handoff, as a sum completed twice (exit 1).

Needs torch (Debian's python3-torch, gloo on the CPU): skipped without it,
saying so; with SEAM_REQUIRE_TORCH=1 (CI) it fails instead.
"""
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import require_torch  # noqa: E402

require_torch("seam check's torch tests")

REPLAY = pathlib.Path(__file__).with_name("trace_replay.py")
LLAMA = ["llama", "--tp", "2", "--pp", "2"]


def _replay(tmp_path: pathlib.Path, plan_dir: pathlib.Path, name: str, *extra: str) -> pathlib.Path:
    out = tmp_path / name
    init = f"file://{tmp_path}/store-{name}"
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo")
    procs = [subprocess.Popen([sys.executable, str(REPLAY), str(r), "4", init, str(plan_dir), str(out), *extra],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(4)]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=120)[0])
    finally:
        for p in procs:
            p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(outputs)
    return out


@pytest.fixture
def plan_dir(cli, tmp_path):
    code, _, err = cli("run", *LLAMA, "--write-trace", str(tmp_path / "plan"))
    assert code == 0, err
    return tmp_path / "plan"


def _check(cli, traces: pathlib.Path) -> tuple[int, str, str]:
    files = sorted(str(p) for p in traces.iterdir())
    assert [pathlib.Path(f).name for f in files] == [f"seam-trace.{r}.jsonl" for r in range(4)]
    return cli("check", *LLAMA, "--act-dtype", "fp32", "--trace", *files)


def test_a_gloo_run_of_the_plans_collectives_matches_on_every_rank(cli, plan_dir, tmp_path):
    code, out, err = _check(cli, _replay(tmp_path, plan_dir, "clean"))
    assert code == 0, out + err
    for r, n in ((0, 7), (1, 7), (2, 9), (3, 9)):
        assert f"rank {r}: matches its plan ({n} collectives" in out, out
    assert "batch: 32 rows per DP group (read from the trace's sizes" in out, out


def test_a_sum_completed_again_after_the_handoff_is_named_on_both_ranks(cli, plan_dir, tmp_path):
    code, out, err = _check(cli, _replay(tmp_path, plan_dir, "twice", "twice"))
    assert code == 1, out + err
    for r in (2, 3):
        assert (f"rank {r}: diverges at collective 3 of 9\n"
                "  where:       the handoff from pipeline rank 0\n") in out, out
    assert out.count("  looks like:  a sum completed twice\n") == 2, out
    assert "rank 0: matches its plan" in out and "rank 1: matches its plan" in out, out
