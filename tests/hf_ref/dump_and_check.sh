#!/bin/sh
# Runs a model with --dump, checks the dump against the family's independent
# reference (check.py), then runs the dumped checkpoint with --weights and the
# same flags and checks that it reproduces the dumped outputs bit for bit.
#
# Usage: dump_and_check.sh SEAM DIR TOLERANCE MODEL [FLAGS...]
set -eu
seam=$1 dir=$2 tol=$3 model=$4
shift 4
here=$(dirname "$0")
rm -rf "$dir" "$dir.back"
"$seam" run "$model" "$@" --dump "$dir" >/dev/null
/usr/bin/python3 "$here/check.py" "$dir" "$tol"
# The checkpoint carries its dtype: --dtype does not go with --weights.
skip=0
for arg in "$@"; do
  shift
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ "$arg" = --dtype ]; then skip=1; continue; fi
  set -- "$@" "$arg"
done
"$seam" run --weights "$dir" "$@" --dump "$dir.back" >/dev/null
/usr/bin/python3 "$here/same_outputs.py" "$dir" "$dir.back"
