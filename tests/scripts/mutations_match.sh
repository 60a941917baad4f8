#!/usr/bin/env bash
# Every mutation of scripts/mutate still finds the code it changes, exactly
# once: a refactor or a reformat that moves the code would otherwise leave
# the mutation silently testing nothing.
# Usage: mutations_match.sh ROOT
set -euo pipefail
cd "$1"
bad=0
mutate() {
  if ! /usr/bin/python3 -c 'import sys; sys.exit(open(sys.argv[1]).read().count(sys.argv[2]) != 1)' "$2" "$3"; then
    echo "scripts/mutate: $1 does not find its code in $2 exactly once" >&2
    bad=1
  fi
}
# The entries, each a call of mutate, without the script's own set-up.
eval "$(sed -n '/^mutate [a-z0-9_]* /,$p' scripts/mutate)"
[ "$bad" = 0 ] && echo "every mutation of scripts/mutate finds its code"
exit "$bad"
