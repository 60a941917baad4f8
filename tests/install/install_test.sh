#!/bin/sh
# Installs the build into a fresh prefix and builds examples/ against it as a
# user would: with find_package(seam) and with pkg-config (from a moved
# prefix, too). The planner example links no MPI and no BLAS; the runtime
# example runs bit for bit.
#
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR VERSION
set -eu
build="$1" src="$2" work="$3" version="$4"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
fail() { echo "install test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/seam lib/libseam_planner.a lib/libseam_runtime.a lib/cmake/seam/seamConfig.cmake \
         lib/cmake/seam/seamConfigVersion.cmake lib/pkgconfig/seam-planner.pc lib/pkgconfig/seam-runtime.pc \
         include/seam/version.h include/seam/plan.h include/seam/runtime/exec.h; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
[ ! -e "$prefix/include/seam/exec.h" ] || fail "an executor header sits among the planner's"
[ "$("$prefix/bin/seam" --version)" = "seam $version" ] || fail "the installed seam is not version $version"
# seam loads no MPI library; with MPI, runs on it go to seam-mpi beside it.
if ldd "$prefix/bin/seam" | grep -E "libmpi|openblas|libblas"; then fail "the installed seam links MPI or BLAS"; fi
if [ -e "$prefix/lib/libseam_mpi.a" ]; then
  [ -x "$prefix/bin/seam-mpi" ] || fail "an install with MPI lacks bin/seam-mpi"
  ldd "$prefix/bin/seam-mpi" | grep -q libmpi || fail "bin/seam-mpi does not link MPI"
fi

sed "s/@VERSION@/$version/" "$src/tests/install/boundaries.expected" > "$work/expected"

# find_package(seam), as examples/CMakeLists.txt does.
cmake -S "$src/examples" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null \
  || fail "examples/ does not configure against the install"
cmake --build "$work/cmake" >/dev/null || fail "examples/ does not build against the install"
"$work/cmake/boundaries" > "$work/boundaries.out"
diff -u "$work/expected" "$work/boundaries.out" || fail "the planner example printed other boundaries"
"$work/cmake/run_on_threads" | grep -qx "llama tp=2 pp=2: 16 tokens, hidden 16x64, logits 16x256, bit-identical: yes" \
  || fail "the runtime example's run is not bit-identical"
if ldd "$work/cmake/boundaries" | grep -E "libmpi|openblas|libblas|libpython"; then
  fail "the planner example links MPI, BLAS or Python"
fi

# A minor version the install is not is refused (0.x: the API may change).
mkdir -p "$work/newer"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX)\nfind_package(seam 0.%s REQUIRED)\n' \
  "$(( $(echo "$version" | cut -d. -f2) + 1 ))" > "$work/newer/CMakeLists.txt"
if cmake -S "$work/newer" -B "$work/newer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  fail "find_package accepted a newer minor version than the install"
fi

# pkg-config, from the prefix moved elsewhere: the .pc files find themselves.
mv "$prefix" "$work/moved"
PKG_CONFIG_PATH="$work/moved/lib/pkgconfig"
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion seam-runtime)" = "$version" ] || fail "pkg-config reports another version"
# shellcheck disable=SC2046 # pkg-config prints a list of flags
c++ -o "$work/boundaries-pc" "$src/examples/boundaries.cc" $(pkg-config --cflags --libs seam-planner) \
  || fail "the planner example does not build with pkg-config"
"$work/boundaries-pc" > "$work/boundaries-pc.out"
diff -u "$work/expected" "$work/boundaries-pc.out" || fail "the pkg-config build printed other boundaries"
echo "installed, and built examples/ with find_package and pkg-config"
