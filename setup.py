"""Builds seam's native module with CMake for `pip install .` (pyproject.toml).

The version is CMakeLists.txt's. The module is built in, first found:

- SEAM_BUILD_DIR when set: a build of seam with its Python package on (the
  test suite installs from its own build this way), configured here first
  when it is not one yet;
- the repository's build/ (what scripts/build and scripts/test make), when it
  builds the Python package for an interpreter of this one's ABI: only the
  module is compiled, the libraries are already there;
- build-python/ in the repository, configured here (Release), kept between
  installs so that a second install rebuilds only what changed.

CMAKE_ARGS adds options to a configure made here. Before anything is built,
the Python running pip is checked for what the install needs (wheel, numpy,
Python's headers, pybind11, cmake): what it lacks is named in one message.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(seam VERSION (\d+\.\d+\.\d+)", text).group(1)


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def _pybind11_found() -> bool:
    """pybind11's CMake package: from the pybind11 module, or installed
    system-wide (Debian's pybind11-dev) where CMake finds it itself."""
    if _importable("pybind11"):
        return True
    prefixes = {"/usr", "/usr/local", sys.prefix, sys.base_prefix, *os.environ.get("CMAKE_PREFIX_PATH", "").split(":")}
    return any((pathlib.Path(p) / sub / "pybind11Config.cmake").exists() for p in prefixes if p
               for sub in ("lib/cmake/pybind11", "share/cmake/pybind11", "lib64/cmake/pybind11"))


def _setuptools_needs_wheel() -> bool:
    """setuptools before 70.1 builds a wheel with the wheel package's bdist_wheel."""
    import setuptools

    numbers = [int(n) for n in re.findall(r"\d+", setuptools.__version__)[:2]] + [0, 0]
    return tuple(numbers[:2]) < (70, 1)


def check_prerequisites(configure: bool) -> None:
    """Stops at once, naming everything this Python lacks for the install
    (its headers and pybind11 only where the build is configured here)."""
    missing = []
    if _setuptools_needs_wheel() and not _importable("wheel"):
        missing.append(("wheel", "python3-wheel", "wheel"))
    if not _importable("numpy"):
        missing.append(("numpy (seam.run's arrays)", "python3-numpy", "numpy"))
    if configure and not (pathlib.Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        missing.append(("Python's headers (Python.h)", "python3-dev", None))
    if configure and not _pybind11_found():
        missing.append(("pybind11", "pybind11-dev", "pybind11"))
    if shutil.which("cmake") is None:
        missing.append(("cmake", "cmake", "cmake"))
    if not missing:
        return
    pip = [p for _, _, p in missing if p]
    debian = " ".join(d for _, d, _ in missing)
    raise SystemExit(
        f"seam cannot be installed with {sys.executable}: it lacks {', '.join(w for w, _, _ in missing)}.\n"
        + (f"Install {'them' if len(pip) > 1 else 'it'} into this Python (pip install {' '.join(pip)}), or make "
           if pip else "Make ")
        + "the virtual environment from Debian's python3, which has them once installed "
        f"(apt-get install {debian}):\n"
        "  /usr/bin/python3 -m venv --system-site-packages VENV && VENV/bin/pip install --no-build-isolation .")


def _ext_suffix(python: str) -> str | None:
    try:
        out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                             capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _builds_module_for_us(build: pathlib.Path) -> bool:
    """Whether `build` is a configured build of the Python package for an
    interpreter whose extension modules this one loads."""
    cache = build / "CMakeCache.txt"
    if not cache.exists() or not (build / "python" / "CMakeFiles" / "seam_python.dir").is_dir():
        return False
    m = re.search(r"^_?Python3_EXECUTABLE:[A-Z]+=(.+)$", cache.read_text(errors="replace"), re.M)
    return m is not None and _ext_suffix(m.group(1)) == sysconfig.get_config_var("EXT_SUFFIX")


def build_dir(root: pathlib.Path = ROOT) -> tuple[pathlib.Path, bool]:
    """Where the module is built, and whether that build must be configured."""
    given = os.environ.get("SEAM_BUILD_DIR")
    if given:
        build = pathlib.Path(given).resolve()
        return build, not (build / "CMakeCache.txt").exists()
    if _builds_module_for_us(root / "build"):
        return root / "build", False
    return root / "build-python", True


class CMakeBuild(build_ext):
    """Configures where needed and builds the seam_python target, then copies
    the module where setuptools expects it."""

    def build_extension(self, ext: Extension) -> None:
        build, configure = build_dir()
        print(f"seam: building the native module in {build}", flush=True)
        if configure:
            args = ["-DCMAKE_BUILD_TYPE=Release", "-DSEAM_PYTHON=ON", "-DSEAM_TESTS=OFF", "-DSEAM_BENCH=OFF",
                    "-DSEAM_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
            try:
                import pybind11
                args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
            except ImportError:
                pass  # CMake finds a system-wide pybind11 (pybind11-dev) itself
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        build.mkdir(parents=True, exist_ok=True)
        with open(build / ".build.lock", "w") as lock:  # scripts/build's lock: one build at a time
            try:
                import fcntl
                fcntl.flock(lock, fcntl.LOCK_EX)
            except ImportError:
                pass
            subprocess.run(["cmake", "--build", str(build), "--target", "seam_python"], check=True)
        built = sorted((build / "python" / "seam").glob("_seam*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one native module in {build}/python/seam, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


if __name__ == "__main__":  # as setuptools runs it (a test imports the functions above)
    check_prerequisites(build_dir()[1])
    setup(version=version(), ext_modules=[Extension("seam._seam", sources=[])], cmdclass={"build_ext": CMakeBuild})
