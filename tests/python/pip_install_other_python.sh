#!/bin/sh
# `pip install --no-build-isolation .` from a Python that is not Debian's (a
# pyenv or conda interpreter, as a user may have first on PATH), into a fresh
# virtual environment made from it: the install either works (the package
# plans as the command line does) or stops at once, before anything is built,
# with one message naming exactly what that Python lacks. Skips (77) where no
# such Python is installed.
#
# Usage: pip_install_other_python.sh SOURCE_DIR WORK_DIR SEAM_CLI
set -eu
src="$1" work="$2" cli="$3"
fail() { echo "pip install (other python) test: $*" >&2; exit 1; }
other=""
# The python3 first on PATH (a pyenv shim, a conda environment's), else one pyenv or conda installed.
for p in "${SEAM_OTHER_PYTHON:-}" "$(command -v python3 || true)" "${CONDA_PREFIX:-/nonexistent}/bin/python3" \
         "$HOME"/.pyenv/versions/*/bin/python3 /root/.pyenv/versions/*/bin/python3 /opt/conda/bin/python3; do
  [ -n "$p" ] && [ -x "$p" ] || continue
  real="$(readlink -f "$p")"
  case "$real" in /usr/bin/*|/bin/*) continue ;; esac
  other="$p"
  break
done
[ -n "$other" ] || { echo "no Python other than Debian's is installed: skipped"; exit 77; }
rm -rf "$work"
"$other" -m venv "$work/venv" || fail "$other cannot make a virtual environment"
venv="$work/venv/bin/python"
# What the environment lacks, by the names the install's message gives them.
lacks=""
"$venv" -c 'import numpy' 2>/dev/null || lacks="$lacks numpy"
"$venv" - <<'PY' || lacks="$lacks wheel"
import re, setuptools
v = tuple(int(n) for n in re.findall(r"\d+", setuptools.__version__)[:2])
if v < (70, 1):
    import wheel  # noqa: F401
PY
start="$(date +%s)"
# setup.py chooses the build: the repository's build/ where it makes the package for this ABI.
if "$venv" -m pip install --no-build-isolation --no-index -q "$src" > "$work/log" 2>&1; then
  [ -z "$lacks" ] || fail "pip installed though the environment lacks$lacks"
  (cd "$work" && "$venv" -c 'import seam; print(seam.plan("llama", tp=2).table(), end="")') > "$work/table" \
    || fail "the package installed from $other does not plan"
  "$cli" plan llama --tp 2 > "$work/expected"
  cmp -s "$work/table" "$work/expected" || fail "the table of the package installed from $other is not the command line's"
  echo "pip installed seam with $other; it plans as the command line does"
  exit 0
fi
took=$(( $(date +%s) - start ))
[ -n "$lacks" ] || { cat "$work/log" >&2; fail "pip install with $other failed though nothing is missing"; }
grep -q "seam cannot be installed with $work/venv/bin/python" "$work/log" || { cat "$work/log" >&2; fail "no clear message"; }
[ "$(grep -c "seam cannot be installed" "$work/log")" = 1 ] || fail "the message is not given once"
for name in $lacks; do
  grep -q "it lacks.*$name" "$work/log" || { cat "$work/log" >&2; fail "the message does not name $name"; }
  grep -q "pip install.* $name" "$work/log" || fail "the message does not say how to install $name"
done
grep -q "building the native module" "$work/log" && fail "pip built before refusing"
[ "$took" -lt 60 ] || fail "pip took $took s to refuse"
echo "pip install with $other stops at once naming what it lacks:$lacks"
