#!/usr/bin/python3
"""Runs every hostile input of cases.txt against the seam binary.

Each case is one line:  EXIT | MESSAGE | ARGUMENTS
  EXIT       the exit code seam must give (2: bad input, 1: a failed check,
             3: a deadline; 0 where a hostile-looking input is valid), with
             "no-asan" after it for a case that sets its own address-space
             limit, which AddressSanitizer's shadow memory cannot run under
  MESSAGE    a substring its stderr must hold
  ARGUMENTS  seam's arguments, split as a shell would ({f}: the fixture
             directory that make_fixtures.py fills; {t}: a fresh empty
             directory for this case; {c}: the repository's configs/), or
             "sh: SCRIPT", a bash script run with seam and seam-mpi first on
             PATH (for limits, redirections, mpirun and what a run leaves)
Each runs under a 3 GiB address-space limit and a 10 s deadline, and its peak
resident memory must stay under 2 GiB. Lines starting with # are comments.

Usage: run_cases.py SEAM CASES FIXTURES CONFIGS     exit 0 when every case holds
"""
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time

SECONDS = 10
ADDRESS_SPACE = 3 << 30
RESIDENT = 2 << 30


def limits():
    # AddressSanitizer reserves terabytes of address space for its shadow:
    # under it the peak resident memory alone is checked.
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    os.setsid()


def run_case(argv, env=None):
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, preexec_fn=limits, env=env)
        deadline = start + SECONDS
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(p.pid, 0)
                return None, "", time.monotonic() - start, usage.ru_maxrss * 1024
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return p.returncode, err.read().decode(errors="replace"), time.monotonic() - start, usage.ru_maxrss * 1024


def main():
    seam, cases, fixtures, configs = sys.argv[1:5]
    failures, count = [], 0
    for number, line in enumerate(open(cases), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        code, message, rest = (part.strip() for part in line.split("|", 2))
        code, *marks = code.split()
        if "no-asan" in marks and "ASAN_OPTIONS" in os.environ:
            continue
        count += 1
        with tempfile.TemporaryDirectory(prefix="seam_hostile_") as t:
            fill = lambda a: a.replace("{f}", fixtures).replace("{t}", t).replace("{c}", configs)  # noqa: E731
            if rest.startswith("sh:"):
                env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(seam)) + ":" + os.environ["PATH"])
                got, stderr, seconds, peak = run_case(["/bin/bash", "-c", fill(rest[3:].strip())], env)
            else:
                got, stderr, seconds, peak = run_case([seam] + [fill(a) for a in shlex.split(rest)])
        where = f"line {number}: seam {rest}"
        if got is None:
            failures.append(f"{where}\n  did not finish in {SECONDS} s")
        elif got != int(code) or message not in stderr:
            failures.append(f"{where}\n  want exit {code} and '{message}'\n  got exit {got}: {stderr.strip()[-400:]}")
        elif peak > RESIDENT:
            failures.append(f"{where}\n  peak memory {peak >> 20} MiB")
    for f in failures:
        print(f)
    print(f"{count} hostile inputs, {count - len(failures)} refused as expected, {len(failures)} not")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
