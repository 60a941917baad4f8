"""setup.py (pip install .) builds the native module in the repository's
build/ when that build makes the Python package for this interpreter's ABI,
so an install after scripts/test compiles the module only; elsewhere in
SEAM_BUILD_DIR or build-python/."""
import importlib.util
import os
import sys
import sysconfig

import pytest

from conftest import ROOT


@pytest.fixture
def setup_py(monkeypatch):
    monkeypatch.delenv("SEAM_BUILD_DIR", raising=False)
    spec = importlib.util.spec_from_file_location("seam_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines, runs nothing
    return module


def configured(root, python):
    build = root / "build"
    (build / "python" / "CMakeFiles" / "seam_python.dir").mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_BUILD_TYPE:STRING=RelWithDebInfo\n_Python3_EXECUTABLE:INTERNAL={python}\n")
    return build


def test_pip_install_reuses_the_repositorys_build_for_this_pythons_abi(setup_py, tmp_path):
    build = configured(tmp_path, sys.executable)
    assert setup_py.build_dir(tmp_path) == (build, False)


def test_pip_install_builds_apart_from_a_build_for_another_abi(setup_py, tmp_path):
    other = tmp_path / "python-other"
    other.write_text("#!/bin/sh\necho .cpython-27-other.so\n")
    other.chmod(0o755)
    configured(tmp_path, other)
    assert setup_py.build_dir(tmp_path) == (tmp_path / "build-python", True)


def test_pip_install_builds_apart_from_a_build_without_the_python_package(setup_py, tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "CMakeCache.txt").write_text(f"_Python3_EXECUTABLE:INTERNAL={sys.executable}\n")
    assert setup_py.build_dir(tmp_path) == (tmp_path / "build-python", True)
    assert setup_py.build_dir(tmp_path / "nothing") == (tmp_path / "nothing" / "build-python", True)


def test_seam_build_dir_names_the_build_configuring_it_when_new(setup_py, tmp_path, monkeypatch):
    configured(tmp_path, sys.executable)
    monkeypatch.setenv("SEAM_BUILD_DIR", str(tmp_path / "mine"))
    assert setup_py.build_dir(tmp_path) == (tmp_path / "mine", True)
    monkeypatch.setenv("SEAM_BUILD_DIR", str(tmp_path / "build"))
    assert setup_py.build_dir(tmp_path) == (tmp_path / "build", False)


def test_what_the_python_lacks_is_named_in_one_message(setup_py, monkeypatch):
    real = setup_py._importable
    monkeypatch.setattr(setup_py, "_importable", lambda name: name not in ("numpy", "wheel", "pybind11") and real(name))
    monkeypatch.setattr(setup_py, "_setuptools_needs_wheel", lambda: True)
    monkeypatch.setattr(setup_py, "_pybind11_found", lambda: False)
    with pytest.raises(SystemExit) as e:
        setup_py.check_prerequisites(configure=True)
    message = str(e.value)
    assert message.startswith(f"seam cannot be installed with {sys.executable}: it lacks wheel, numpy")
    assert "pybind11" in message and "pip install wheel numpy pybind11" in message
    assert "apt-get install python3-wheel python3-numpy" in message and "pybind11-dev" in message
    with pytest.raises(SystemExit) as e:  # a build made already: pybind11 is not needed
        setup_py.check_prerequisites(configure=False)
    assert "pybind11" not in str(e.value)


def test_nothing_is_said_where_nothing_is_lacking(setup_py):
    if not all(setup_py._importable(n) for n in ("numpy", "wheel")):
        pytest.skip("this Python lacks numpy or wheel")
    if not (os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) and setup_py._pybind11_found()):
        pytest.skip("this Python has no headers or pybind11")
    setup_py.check_prerequisites(configure=True)
