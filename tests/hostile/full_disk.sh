#!/bin/sh
# A dump that runs out of space (a file size limit stands in for a full
# disk) fails with exit 2 and leaves nothing behind: neither the directory
# nor a half-written file beside it; over an earlier dump (--force) it
# leaves the earlier dump whole.
#
# Usage: full_disk.sh SEAM DIR
set -u
seam=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
# seam ignores SIGXFSZ itself: a write past the limit fails with EFBIG.
( ulimit -f 100; "$seam" run llama --dump "$dir/new" ) >/dev/null 2>"$dir/err"
code=$?
[ "$code" = 2 ] || { echo "exit $code, expected 2"; cat "$dir/err"; exit 1; }
grep -q "nothing was written to $dir/new" "$dir/err" || { echo "unexpected message:"; cat "$dir/err"; exit 1; }
[ -z "$(ls -A "$dir" | grep -v '^err$')" ] || { echo "left behind:"; ls -A "$dir"; exit 1; }
"$seam" run llama --dump "$dir/old" >/dev/null || exit 1
before=$(cat "$dir/old/"* | cksum)
( ulimit -f 100; "$seam" run mhc --dump "$dir/old" --force ) >/dev/null 2>"$dir/err"
[ $? = 2 ] || { echo "the forced dump did not fail"; exit 1; }
[ "$(cat "$dir/old/"* | cksum)" = "$before" ] || { echo "the earlier dump changed"; exit 1; }
[ -z "$(ls -A "$dir" | grep -v '^err$' | grep -v '^old$')" ] || { echo "left behind:"; ls -A "$dir"; exit 1; }
echo "a dump onto a full disk leaves the earlier dump or nothing"
