#!/bin/sh
# `pip install --no-build-isolation .` into a fresh virtual environment that
# sees Debian's pybind11 and numpy, from the suite's own build (SEAM_BUILD_DIR,
# so nothing is compiled again): the installed package imports from the
# environment, carries its stubs, and plans as the command line does.
#
# Usage: pip_install.sh PYTHON SOURCE_DIR BUILD_DIR WORK_DIR SEAM_CLI
set -eu
python="$1" src="$2" build="$3" work="$4" cli="$5"
fail() { echo "pip install test: $*" >&2; exit 1; }
rm -rf "$work"
"$python" -m venv --system-site-packages "$work/venv" || fail "no venv (python3-venv)"
SEAM_BUILD_DIR="$build" "$work/venv/bin/pip" install --no-build-isolation --no-index -q "$src" \
  || fail "pip install failed"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
for f in __init__.py _plan.py _errors.py _seam.pyi py.typed trace.py _trace_hook/sitecustomize.py; do
  [ -f "$site/seam/$f" ] || fail "the installed package lacks seam/$f"
done
[ "$("$work/venv/bin/python" -m seam.trace --hook-dir)" = "$site/seam/_trace_hook" ] \
  || fail "python -m seam.trace --hook-dir does not print the installed seam/_trace_hook"
cd "$work"
"$work/venv/bin/python" - "$site" > "$work/table" <<'PY' || fail "the installed package does not plan"
import sys
import seam
assert seam.__file__.startswith(sys.argv[1]), seam.__file__
print(seam.plan("deepseek-v2-lite", tp=4, attn_dp=2, dense_tp=1, moe="a2a").table(), end="")
PY
"$cli" plan deepseek-v2-lite --tp 4 --attn-dp 2 --dense-tp 1 --moe a2a > "$work/expected"
cmp -s "$work/table" "$work/expected" || fail "the installed package's table is not the command line's"
echo "pip installed seam into a venv; it plans as the command line does"
