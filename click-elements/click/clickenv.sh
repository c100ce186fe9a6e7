# Shared by bench.sh, run-examples.sh and crosscheck.sh (sourced, POSIX sh):
# finding a Click installation and building the tracelab package against it.

# click_prefix_or_skip [PREFIX]: sets CLICKPREFIX from PREFIX, the
# environment or the `click` on PATH; without a usable installation prints
# "SKIPPED (no Click installation ...)" and exits the calling script with 0,
# so CI without Click stays green and says why.
click_prefix_or_skip() {
  CLICKPREFIX=${1:-${CLICKPREFIX:-}}
  if [ -z "$CLICKPREFIX" ] && command -v click >/dev/null 2>&1; then
    CLICKPREFIX=$(dirname "$(dirname "$(command -v click)")")
  fi
  if [ -z "$CLICKPREFIX" ]; then
    echo "SKIPPED (no Click installation)"
    exit 0
  fi
  [ -x "$CLICKPREFIX/bin/click" ] || { echo "SKIPPED (no Click installation at $CLICKPREFIX)"; exit 0; }
}

# build_click_package WORK: builds the package out of tree in WORK (Click's
# pkg-Makefile re-invokes make on ./Makefile) and exports CLICKPATH, from
# which click loads the packages named by require(package ...).
build_click_package() {
  echo "include $here/Makefile" > "$1/Makefile"
  make -C "$1" CLICKPREFIX="$CLICKPREFIX" -j2 >"$1/build.log" 2>&1 || { cat "$1/build.log" >&2; exit 1; }
  export CLICKPATH="$1:$CLICKPREFIX/lib:$CLICKPREFIX/share/click"
}
