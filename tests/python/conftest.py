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


def require_torch(what: str) -> None:
    """Called at a test module's top: skips the module when torch with gloo
    is missing, saying "WHAT need torch" (ctest matches that as a skip); with
    SEAM_REQUIRE_TORCH=1 (CI) fails it instead."""
    try:
        import torch.distributed as dist

        missing = None if dist.is_available() and dist.is_gloo_available() else "torch has no gloo torch.distributed"
    except ImportError as e:
        missing = f"torch does not import ({e})"
    if not missing:
        return
    if os.environ.get("SEAM_REQUIRE_TORCH") == "1":
        pytest.fail(f"SEAM_REQUIRE_TORCH=1 but {missing}: apt-get install python3-torch", pytrace=False)
    pytest.skip(f"{what} need torch: {missing} (Debian: apt-get install python3-torch)", allow_module_level=True)


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
