"""seam's ranks on several hosts: network namespaces joined by virtual
Ethernet links (scripts/hosts), mpirun reaching each host by entering its
namespace, MPI's TCP transport held to the data links. A run across two or
three hosts gives the threads backend's bits, dump and traffic; a link cut
or a host's rank killed or stopped ends the run within its --timeout, named,
with nothing left running and nothing half-written; a brief stall or a link
down and up again within the timeout finishes with the same bits.

The hosts are the ones `scripts/hosts up` made (CI makes three); without
them a root user's run makes its own and removes them after. Where none can
be made the tests are skipped, saying why (SEAM_REQUIRE_HOSTS=1 makes that a
failure instead)."""
import filecmp
import os
import pathlib
import re
import signal
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOSTS = ROOT / "scripts" / "hosts"
SEAM = os.environ.get("SEAM_CLI", str(ROOT / "build" / "seam"))
FAMILIES = ["llama", "llama3", "qwen3", "qwen3-moe", "gpt-oss", "deepseek-v2-lite", "deepseek-qlora", "kimi-k2",
            "nemotron-h", "nemotron-3-nano", "zaya1", "qwen3-next", "nemotron-nas", "mhc"]
# Pipeline and attention DP on 8 ranks, the attention-TP groups of two.
LAYOUT = ["--tp", "4", "--attn-dp", "2", "--pp", "2"]
# Placements of the 8 ranks: over 2 hosts a pipeline stage a host (the
# handoffs cross); over 3, round robin (every group crosses).
PLACEMENTS = {2: ["--map-by", "ppr:4:node"], 3: []}
# A generation long enough to be cut in the middle: about 5 s of steps on 8
# idle ranks over three hosts (and the reference's check after them).
LONG = ["run", "llama", *LAYOUT, "--requests", "40:2000,30:2000", "--generate", "2000"]


def hosts_cmd(*args, **kw):
    return subprocess.run([str(HOSTS), *args], capture_output=True, text=True, **kw)


def hosts_up():
    r = hosts_cmd("status")
    return [line.split()[0] for line in r.stdout.splitlines()] if r.returncode == 0 else []


@pytest.fixture(scope="session")
def hosts():
    made = False
    up = hosts_up()
    why = None
    if os.geteuid() != 0:
        why = "not root (scripts/hosts makes namespaces and links, and mpirun enters them)"
    elif 0 < len(up) < 3:
        why = f"only {len(up)} hosts are up (scripts/hosts down, then scripts/hosts up 3)"
    elif not up:
        r = hosts_cmd("up", "3")
        made = r.returncode == 0
        why = None if made else "scripts/hosts up 3 failed: " + (r.stderr.strip() or r.stdout.strip())
        up = hosts_up()
    if why is not None:
        if os.environ.get("SEAM_REQUIRE_HOSTS"):
            pytest.fail("SEAM_REQUIRE_HOSTS is set but " + why)
        pytest.skip("hosts on this machine (network namespaces, as root): " + why)
    yield up
    if made:
        hosts_cmd("down")


def mpirun(hosts, args, count=3, timeout=120, **kw):
    return subprocess.Popen([str(HOSTS), "mpirun", "--hosts", str(count), *PLACEMENTS[count], "-np", "8", SEAM,
                             *args, "--backend", "mpi"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **kw)


def seam(args):
    return subprocess.run([SEAM, *args], capture_output=True, text=True, timeout=120)


def rank_lines(out):
    return [line for line in out.splitlines() if line.startswith("  rank ")]


def left_running(hosts):
    return hosts_cmd("pids").stdout.split()


def same_dump(a, b):
    names = sorted(os.listdir(a))
    assert names == sorted(os.listdir(b))
    assert len(names) >= 3
    return all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names)


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_run_across_hosts_is_the_threads_backends_bits_dump_and_traffic(hosts, family, count, tmp_path):
    args = ["run", family, *LAYOUT, "--tokens", "23", "--requests", "3"]
    threads = seam([*args, "--dump", str(tmp_path / "threads")])
    assert threads.returncode == 0, threads.stderr
    p = mpirun(hosts, [*args, "--dump", str(tmp_path / "mpi")], count)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    assert "backend=mpi (canonical)" in out and "\nbit-identical: yes\n" in out, out
    assert rank_lines(out) == rank_lines(threads.stdout) and len(rank_lines(out)) == 8
    assert same_dump(tmp_path / "threads", tmp_path / "mpi")


def test_the_ranks_run_on_the_hosts_and_talk_over_the_data_links_only(hosts):
    # Each rank's host is its namespace (its UTS name is the host's).
    p = subprocess.run([str(HOSTS), "mpirun", "-np", "6", "hostname"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.split()) == sorted(hosts * 2)
    # With one host's data link down, mpirun still starts every rank over
    # the control link, but the ranks cannot reach that host's: the job
    # fails, and ends.
    hosts_cmd("cut", "seamh3")
    try:
        r = mpirun(hosts, ["run", "llama", *LAYOUT, "--timeout", "4"])
        out, _ = r.communicate(timeout=60)
    finally:
        hosts_cmd("mend", "seamh3")
    assert r.returncode != 0, out
    assert "bit-identical" not in out, out
    assert left_running(hosts) == []


def wait_for_ranks(hosts, host="seamh2", timeout=20.0):
    """The pids of the seam processes running on `host` once all 8 ranks run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ranks = []
        for h in hosts:
            for pid in hosts_cmd("pids", h).stdout.split():
                try:
                    if pathlib.Path(f"/proc/{pid}/comm").read_text().strip() in ("seam", "seam-mpi"):
                        ranks.append((h, int(pid)))
                except OSError:
                    pass
        if len(ranks) == 8:
            return [pid for h, pid in ranks if h == host]
        time.sleep(0.05)
    raise AssertionError("the 8 ranks did not start")


def mpi_rank_of(pid):
    env = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return int(next(e for e in env if e.startswith(b"OMPI_COMM_WORLD_RANK=")).split(b"=")[1])


def faulted_run(hosts, tmp_path, fault, timeout_s=4):
    """Starts the long generation, lets it run a second and a half, applies `fault` to
    the second host (its rank pids given) and returns the run's output, exit
    code and the seconds from the fault to the end of mpirun."""
    p = mpirun(hosts, [*LONG, "--timeout", str(timeout_s), "--dump", str(tmp_path / "dump")])
    pids = wait_for_ranks(hosts)
    time.sleep(1.5)  # past the setup: the ranks are in the generation's steps
    assert p.poll() is None and all(pathlib.Path(f"/proc/{pid}").exists() for pid in pids), \
        "the run ended before its fault: make LONG longer"
    at = time.monotonic()
    fault(pids)
    out, _ = p.communicate(timeout=120)
    return out, p.returncode, time.monotonic() - at


def ends_cleanly(hosts, tmp_path):
    assert left_running(hosts) == [], "processes left on the hosts"
    assert not (tmp_path / "dump").exists(), "a dump was written by a run that failed"


def named_silent(out):
    """The ranks named as not answering, and whether a blocking call's
    watchdog (MPI_Init or the communicators, which name no one) ended it."""
    named = {int(r) for r in re.findall(r"rank (\d+) did not answer within", out)}
    return named, "; ending the job" in out


def test_a_link_cut_mid_run_ends_it_within_the_timeout_naming_a_rank_of_that_host(hosts, tmp_path):
    out, code, took = faulted_run(hosts, tmp_path, lambda pids: hosts_cmd("cut", "seamh2"))
    hosts_cmd("mend", "seamh2")
    assert code == 3, out
    named, watchdog = named_silent(out)
    # Round robin over three hosts: seamh2 holds ranks 1, 4 and 7.
    assert named & {1, 4, 7} or watchdog, out
    assert took < 4 + 6, f"{took:.1f} s"
    ends_cleanly(hosts, tmp_path)


def signal_a_rank(sig, ranks):
    """A fault: `sig` to the host's first rank, its MPI rank kept in `ranks`."""
    def fault(pids):
        ranks.append(mpi_rank_of(pids[0]))
        os.kill(pids[0], sig)
    return fault


def test_a_hosts_rank_killed_ends_the_run_and_mpirun_names_it(hosts, tmp_path):
    killed = []
    out, code, took = faulted_run(hosts, tmp_path, signal_a_rank(signal.SIGKILL, killed))
    assert code != 0, out
    assert f"process rank {killed[0]} with PID" in out and "on node seamh2 exited on signal 9" in out, out
    assert took < 4 + 6, f"{took:.1f} s"
    ends_cleanly(hosts, tmp_path)


def test_a_hosts_rank_stopped_past_the_timeout_is_named_and_every_rank_ends(hosts, tmp_path):
    stopped = []
    out, code, took = faulted_run(hosts, tmp_path, signal_a_rank(signal.SIGSTOP, stopped))
    assert code == 3, out
    # The stopped rank is named by those waiting on it, and names no one
    # (or, stopped in a call with no deadline of its own, the watchdog ends it).
    named, watchdog = named_silent(out)
    assert stopped[0] in named or watchdog, out
    assert f"rank {stopped[0]} stopped waiting" not in out, out
    assert took < 4 + 6, f"{took:.1f} s"
    ends_cleanly(hosts, tmp_path)


@pytest.mark.parametrize("fault", ["stall", "link"])
def test_a_brief_stall_or_a_link_down_and_up_within_the_timeout_finishes_bit_identical(hosts, tmp_path, fault):
    def pause(pids):
        os.kill(pids[0], signal.SIGSTOP)
        time.sleep(1.5)
        os.kill(pids[0], signal.SIGCONT)

    def blip(pids):
        hosts_cmd("cut", "seamh2")
        time.sleep(1.5)
        hosts_cmd("mend", "seamh2")

    threads = seam([*LONG, "--dump", str(tmp_path / "threads")])
    assert threads.returncode == 0, threads.stderr
    out, code, _ = faulted_run(hosts, tmp_path, pause if fault == "stall" else blip, timeout_s=20)
    assert code == 0, out
    assert "\nbit-identical: yes\n" in out, out
    assert rank_lines(out) == rank_lines(threads.stdout)
    assert same_dump(tmp_path / "threads", tmp_path / "dump")
    assert left_running(hosts) == []


def readme_block():
    """The README's fenced block that runs seam over scripts/hosts."""
    text = (ROOT / "README.md").read_text()
    for block in re.findall(r"^```[^\n]*\n(.*?)^```\n", text, re.S | re.M):
        if "$ scripts/hosts mpirun " in block:
            return block
    raise AssertionError("the README has no scripts/hosts transcript")


def test_the_readmes_instructions_for_hosts_work_as_written(hosts):
    # Last: it takes the hosts down and makes them again, as the README does.
    block = readme_block()
    hosts_cmd("down")
    try:
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("$ "):
                continue
            command = line[2:].replace("./build/seam ", f"'{SEAM}' ")
            done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, command + "\n" + done.stdout + done.stderr
            # What the README shows after it, up to the next command: each
            # line printed, in order (`...` stands for lines left out).
            shown = []
            for after in lines[i + 1:]:
                if after.startswith("$ "):
                    break
                shown.append(after)
            printed = iter((done.stdout + done.stderr).splitlines())
            for want in shown:
                if want == "..." or want.startswith("time: "):
                    continue
                assert any(got == want for got in printed), f"{command}: '{want}' not printed in order"
    finally:
        if not hosts_up():
            hosts_cmd("up", str(len(hosts)))
