"""The package as installed: its version is the project's, its stubs
declare what the native module holds, its public names are documented."""
import ast
import inspect
import pathlib
import re

import seam
from seam import _seam
from conftest import ROOT


def test_the_version_is_the_projects_and_the_command_lines(cli):
    project = re.search(r"project\(seam VERSION (\d+\.\d+\.\d+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    assert seam.__version__ == project
    assert cli("--version") == (0, f"seam {project}\n", "")


def test_the_changelog_names_this_release_first():
    first = re.search(r"^## \[?(\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(), re.M).group(1)
    assert first == seam.__version__


def _stub_names():
    stub = ast.parse((pathlib.Path(seam.__file__).parent / "_seam.pyi").read_text())
    names = {}
    for node in stub.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            names[node.name] = members
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = set()
    return names


def test_the_stubs_declare_exactly_what_the_native_module_holds():
    stubs = _stub_names()
    native = {n for n in dir(_seam) if not n.startswith("__") or n == "__version__"}
    assert set(stubs) == native
    for name, members in stubs.items():
        obj = getattr(_seam, name)
        if inspect.isclass(obj):
            public = {m for m in dir(obj) if not m.startswith("_")} | ({"__init__", "__eq__", "__len__"} & members)
            assert members - {"__init__", "__eq__", "__len__"} == {m for m in public if not m.startswith("_")}, name


def test_every_public_name_is_exported_and_documented():
    for name in seam.__all__:
        obj = getattr(seam, name)
        if callable(obj):
            assert inspect.getdoc(obj), f"seam.{name} has no docstring"
    assert (pathlib.Path(seam.__file__).parent / "py.typed").exists()


def test_dir_of_seam_lists_its_api_and_its_dunders_only():
    dunders = {n for n in vars(seam) if n.startswith("__") and n.endswith("__")}
    assert set(dir(seam)) == set(seam.__all__) | dunders
    for leaked in ("os", "json", "re", "Any", "Mapping", "Sequence", "dataclass", "annotations", "_seam", "_args"):
        assert leaked not in dir(seam)
    assert all(hasattr(seam, name) for name in seam.__all__)


def test_all_is_what_the_readme_documents():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## From Python\n"):]
    section = section[:section.index("\n## ", 1)]
    named = set(re.findall(r"\bseam\.(\w+)", section))
    assert set(seam.__all__) == named
