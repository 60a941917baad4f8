"""Fixtures of the Python suite: the command line built beside the package
(SEAM_CLI), the repository (SEAM_ROOT), and a runner for the command line
whose output the package must match."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(os.environ.get("SEAM_ROOT", pathlib.Path(__file__).resolve().parents[2]))
CONFIGS = ROOT / "configs"


def cli_path() -> str:
    path = os.environ.get("SEAM_CLI")
    if not path:
        pytest.fail("SEAM_CLI names the seam command line these tests compare the package with (ctest sets it)")
    return path


@pytest.fixture
def cli():
    """Runs `seam ARGS`, returning (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        p = subprocess.run([cli_path(), *args], capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture
def cli_json(cli):
    def run(*args: str) -> dict:
        code, out, err = cli(*args, "--format", "json")
        assert code in (0, 1), err
        return json.loads(out)

    return run
