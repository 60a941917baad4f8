#!/bin/sh
# scripts/deps on machines it must not fail on, with stand-ins for id,
# dpkg-query, sudo and apt-get on PATH (nothing is installed): not root with
# sudo, not root without it (it prints the command and exits 2), a skip, a
# machine without dpkg-query, and a stamp that spares the check.
#
# Usage: deps_test.sh SOURCE_DIR WORK_DIR
set -eu
src="$1" work="$2"
fail() { echo "deps test: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work/bin"
for tool in bash sh grep sed cat mkdir touch dirname env; do
  ln -s "$(command -v "$tool")" "$work/bin/$tool"
done
log="$work/calls"
# Not root; every package installed but libcli11-dev and libfmt-dev.
printf '#!/bin/sh\necho 1000\n' > "$work/bin/id"
cat > "$work/bin/dpkg-query" <<EOS
#!/bin/sh
echo "dpkg-query \$*" >> "$log"
shift 2
for p in "\$@"; do
  case "\$p" in libcli11-dev|libfmt-dev) ;; *) echo "install ok installed \$p" ;; esac
done
exit 1
EOS
printf '#!/bin/sh\necho "sudo $*" >> "%s"\n' "$log" > "$work/sudo"
chmod +x "$work/bin/id" "$work/bin/dpkg-query" "$work/sudo"
deps() { env -i PATH="$1" HOME="$work" ${2:-} "$src/scripts/deps" --planner ${3:-} 2>"$work/err"; }

# Without sudo: the command to run, exit 2.
: > "$log"
if deps "$work/bin"; then fail "it succeeded with packages missing and no way to install them"; else code=$?; fi
[ "$code" = 2 ] || fail "exit $code without sudo, not 2"
grep -qx "seam: missing libfmt-dev libcli11-dev; not root and no sudo: install them, then run again (or set SEAM_SKIP_DEPS=1):" "$work/err" \
  || fail "no sudo: $(cat "$work/err")"
grep -qx "  apt-get install --no-install-recommends libfmt-dev libcli11-dev" "$work/err" || fail "no apt-get line"

# With sudo: it installs exactly what is missing through sudo.
mkdir -p "$work/sudobin" && ln -s "$work/sudo" "$work/sudobin/sudo"
: > "$log"
deps "$work/bin:$work/sudobin" || fail "it failed with sudo: $(cat "$work/err")"
grep -qx "sudo apt-get install -y -qq --no-install-recommends libfmt-dev libcli11-dev" "$log" \
  || fail "sudo did not install the missing packages: $(cat "$log")"

# SEAM_SKIP_DEPS: nothing is checked.
: > "$log"
deps "$work/bin" SEAM_SKIP_DEPS=1 || fail "SEAM_SKIP_DEPS=1 failed"
[ ! -s "$log" ] || fail "SEAM_SKIP_DEPS=1 still checked: $(cat "$log")"

# No dpkg-query (not Debian): a note, and success.
mkdir -p "$work/plain" && for t in bash sh grep sed cat mkdir touch dirname env id; do ln -s "$work/bin/$t" "$work/plain/$t"; done
deps "$work/plain" || fail "a machine without dpkg-query failed"
grep -q "not a Debian system" "$work/err" || fail "no note without dpkg-query"

# A stamp newer than the script spares the check; without it, one check.
: > "$log"
deps "$work/bin:$work/sudobin" "" "--stamp $work/stamp" || fail "--stamp failed"
[ -f "$work/stamp" ] || fail "no stamp written"
: > "$log"
deps "$work/bin:$work/sudobin" "" "--stamp $work/stamp" || fail "--stamp failed the second time"
[ ! -s "$log" ] || fail "a fresh stamp did not spare the check: $(cat "$log")"
echo "scripts/deps: no sudo, sudo, skip, no dpkg-query, stamp"
