#!/bin/sh
# Build the tracelab Click package and run every conf/*.click under
# `click --simtime` on a small real trace from ../shared/datasets.
# Needs a Click installation: CLICKPREFIX=/prefix, or `click` on PATH.
# Without one it prints "SKIPPED (no Click installation)" and exits 0.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
trace="$repo/../shared/datasets/zeek-baselines/wikipedia/wikipedia.pcap"

if [ -z "${CLICKPREFIX:-}" ]; then
  if command -v click >/dev/null 2>&1; then
    CLICKPREFIX=$(dirname "$(dirname "$(command -v click)")")
  else
    echo "SKIPPED (no Click installation)"
    exit 0
  fi
fi
[ -x "$CLICKPREFIX/bin/click" ] || { echo "SKIPPED (no Click installation at $CLICKPREFIX)"; exit 0; }
[ -f "$trace" ] || { echo "FAILED: trace not found: $trace" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Out-of-tree build: Click's pkg-Makefile re-invokes make on ./Makefile.
echo "include $here/Makefile" > "$work/Makefile"
make -C "$work" CLICKPREFIX="$CLICKPREFIX" -j2 >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
# click loads packages named by require(package ...) from CLICKPATH.
export CLICKPATH="$work:$CLICKPREFIX/lib:$CLICKPREFIX/share/click"
fail=0

# Same packets, same bytes, same order (pcap record bodies).
same_packets() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
def bodies(path):
    with open(path, 'rb') as f:
        data = f.read()
    endian = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack(endian + 'IIII', data[off:off + 16])[2]
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
a, b = bodies(sys.argv[1]), bodies(sys.argv[2])
print(f"  byte-for-byte: {len(a)} in, {len(b)} out, equal={a == b}")
sys.exit(0 if a == b and a else 1)
PY
}

for conf in "$here"/conf/*.click; do
  name=$(basename "$conf" .click)
  echo "== $name"
  case "$name" in
    tlchunkqueue)
      for scheme in basicq chumq chutq; do
        out=$("$CLICKPREFIX/bin/click" --simtime "$conf" TRACE="$trace" IN="$work/in.pcap" \
              OUT="$work/out.pcap" SCHEME=$scheme 2>&1) || { echo "$out"; fail=1; continue; }
        echo "  $scheme: $(echo "$out" | tail -1)"
        same_packets "$work/in.pcap" "$work/out.pcap" || fail=1
      done ;;
    tlexactunqueue)
      out=$("$CLICKPREFIX/bin/click" --simtime "$conf" TRACE="$trace" 2>&1) || { echo "$out"; fail=1; continue; }
      line=$(echo "$out" | tail -1)
      echo "  $line"
      bytes=$(echo "$line" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
      span=$(echo "$line" | sed -n 's/.*span_ps=\([0-9]*\).*/\1/p')
      # 10 Gb/s: every byte is exactly 800 ps; one busy period.
      [ "$span" = "$((bytes * 800))" ] && echo "  exact: span = bytes * 800 ps" || { echo "  FAILED: span $span != $((bytes * 800))"; fail=1; } ;;
    *)
      "$CLICKPREFIX/bin/click" --simtime "$conf" TRACE="$trace" || fail=1 ;;
  esac
done
[ $fail = 0 ] && echo "ALL EXAMPLES PASSED" || { echo "SOME EXAMPLES FAILED"; exit 1; }
