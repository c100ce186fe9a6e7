"""Instructions per packet of the analyzer's components, from a callgrind file.

usage: callgrind-components.py CALLGRIND_OUT PACKETS

A component is the self cost of its functions and of the code inlined into
them, told apart by callgrind's inlined-file records (`tcp.rs` inlined into
the tracker thread's loop counts as TCP state). A function outside every
component (memcpy, the allocator, hashbrown, sorting) is charged to its
callers in proportion to the calls' inclusive costs, up to a component.
The rules follow the crates' layout at the time of writing: a new function
falls into "unattributed" until a rule names it.
"""

import collections
import re
import sys

TRACKER_LOOP = "__rust_begin_short_backtrace"


def parse(path):
    """Self cost by (function, source file) and call cost by (caller, callee)."""
    file_names, fn_names = {}, {}
    self_cost = collections.Counter()
    calls = collections.Counter()
    fl = fi = fn = cfn = None
    in_call = False

    def name(table, value):
        # Callgrind names a file or function in full once, then by "(id)".
        m = re.match(r"\((\d+)\)(?: (.*))?", value)
        if not m:
            return value
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table[m.group(1)]

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line[0].isdigit() or line[0] in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if in_call:
                    if cfn != fn:
                        calls[(fn, cfn)] += cost
                    in_call = False
                else:
                    self_cost[(fn, fi or fl)] += cost
                continue
            key, _, value = line.partition("=")
            if key == "fl":
                fl, fi = name(file_names, value), None
            elif key in ("fi", "fe"):
                fi = name(file_names, value)
            elif key == "fn":
                fn, fi = name(fn_names, value), None
            elif key in ("cfl", "cfi"):
                name(file_names, value)
            elif key == "cfn":
                cfn = name(fn_names, value)
            elif key == "calls":
                in_call = True
    return self_cost, calls


def component(fn, file):
    """The component of `fn`'s code from `file`, or None."""
    file = file or ""
    if re.search(r"ZSTD|HUF_|FSE_|HIST_", fn) or "zstd" in file or "/snap-" in file:
        return "compression"
    if "Merger" in fn:
        return "merge (epochs in uid order)"
    if "next_frame" in fn:
        return "read"
    if "decode_into" in fn or "tracelab_decode" in fn:
        return "decode"
    if "Cursor::" in fn or "AddrText" in fn:
        return "conn.log text"
    if "ConnTables::connection" in fn:
        if file.endswith("tracelab-output/src/conn.rs"):
            return "conn.log text"
        return "row encoding"
    if any(s in fn for s in ("encode_page", "FileWriter", "ParquetTable", "LateColumns", "BufWriter")):
        return "Parquet encoding"
    if "OutputSink::connection" in fn or "HostTable" in fn:
        return "host features"
    if "OutputSink::write_rest" in fn:
        return "hosts.parquet, load.parquet, phase 2"
    if any(s in fn for s in ("Conn::finish", "Tracker::drain", "Conn::expired")):
        return "connection finishing"
    if "Conn::new" in fn or "reserve_rehash" in fn:
        return "flow lookup"
    if TRACKER_LOOP in fn or "tracker::" in fn or "tcp::" in fn:
        if any(s in file for s in ("tcp.rs", "metrics.rs", "small.rs")):
            return "TCP state, RTT, trains, warm-ups"
        if "key.rs" in file or "hashbrown" in file:
            return "flow lookup"
        if "service.rs" in file or "tracker.rs" in file:
            return "tracker per packet"
        if "driver.rs" in file:
            return "driver"
        if TRACKER_LOOP in fn:
            return "tracker path's inlined std code"
        return "TCP state, RTT, trains, warm-ups"
    if "driver::profile" in fn:
        return "driver"
    return None


def main():
    path, packets = sys.argv[1], int(sys.argv[2])
    self_cost, calls = parse(path)
    total = sum(self_cost.values())
    parts = collections.Counter()
    loose = collections.Counter()
    for (fn, file), cost in self_cost.items():
        part = component(fn, file)
        if part:
            parts[part] += cost
        else:
            loose[fn] += cost
    callers = collections.defaultdict(list)
    for (caller, callee), cost in calls.items():
        callers[callee].append((caller, cost))

    shares = {}

    def share(fn, seen):
        """`fn`'s cost split over components, as fractions (memoised)."""
        if fn in shares:
            return shares[fn]
        part = component(fn, "")
        if part:
            return {part: 1.0}
        up = [(c, v) for c, v in callers.get(fn, []) if c != fn and c not in seen]
        weight = sum(v for _, v in up)
        if not weight:
            result = {"unattributed": 1.0}
        else:
            result = collections.Counter()
            for caller, v in up:
                for p, f in share(caller, seen | {fn}).items():
                    result[p] += f * v / weight
        shares[fn] = result
        return result

    for fn, cost in loose.items():
        for part, fraction in share(fn, frozenset()).items():
            parts[part] += cost * fraction
    print(f"total {total:,} instructions, {total / packets:,.0f} per packet")
    for part, cost in parts.most_common():
        print(f"{cost / packets:8.0f} per packet {100 * cost / total:5.1f} %  {part}")


if __name__ == "__main__":
    main()
