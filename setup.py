"""Builds seam's native module with CMake for `pip install .` (pyproject.toml).

The version is CMakeLists.txt's. The CMake build goes to build-python/ in the
repository (kept between installs, so a second install rebuilds only what
changed), or to SEAM_BUILD_DIR when set: an existing build of seam with its
Python package on (the test suite installs from its own build this way).
CMAKE_ARGS adds options to the configure.
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(seam VERSION (\d+\.\d+\.\d+)", text).group(1)


class CMakeBuild(build_ext):
    """Configures (unless SEAM_BUILD_DIR names a build) and builds the
    seam_python target, then copies the module where setuptools expects it."""

    def build_extension(self, ext: Extension) -> None:
        given = os.environ.get("SEAM_BUILD_DIR")
        build = pathlib.Path(given).resolve() if given else ROOT / "build-python"
        if not given:
            args = ["-DCMAKE_BUILD_TYPE=Release", "-DSEAM_PYTHON=ON", "-DSEAM_TESTS=OFF", "-DSEAM_BENCH=OFF",
                    "-DSEAM_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
            try:
                import pybind11
                args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
            except ImportError:
                pass  # CMake looks for pybind11 itself
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "seam_python"], check=True)
        built = sorted((build / "python" / "seam").glob("_seam*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one native module in {build}/python/seam, found {built}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(version=version(), ext_modules=[Extension("seam._seam", sources=[])], cmdclass={"build_ext": CMakeBuild})
