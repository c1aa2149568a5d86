# Shared by the scripts: configure and build one flavour of the tree.
# build_tree DIR [cmake args...] builds this tree; build_source SRC DIR [args...] another one;
# configure_source SRC DIR [args...] only configures it.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${SCENERT_JOBS:-$(nproc)}

configure_source() {
  local src=$1 dir=$2; shift 2
  cmake -S "$src" -B "$dir" -G Ninja "$@" >/dev/null
}
build_source() {
  configure_source "$@"
  cmake --build "$2" -j "$jobs"
}
build_tree() { build_source "$root" "$@"; }
