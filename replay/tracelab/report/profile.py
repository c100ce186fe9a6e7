"""Report section for one analyzer profile directory (docs/reference/algorithms.md §9, thesis ch. 8–9):
composition tables; log-log CCDFs of the heavy-tailed variables (flow sizes, durations,
RTTs, warm-ups, train sizes) with 95 % DKW bands; the pacing CDF; QQ plots and CCDFs
of the fitted flow sizes and inter-arrivals; load over time in adaptive bins."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tracelab_models import schema as S
from tracelab_models.distributions import fit_all, frozen
from tracelab_models.profile import column, read_summary, read_table, sample_connections

from .html import PALETTE, Page, bin_width, ccdf, cdf, fig, time_unit

SCOPES = (S.SCOPE_INTRANET, S.SCOPE_INTERNET)
SCOPE_COLOR = {S.SCOPE_INTRANET: PALETTE[0], S.SCOPE_INTERNET: PALETTE[1], "external": PALETTE[2]}
SIDE_STYLE = {"orig": "-", "resp": "--"}
BAND = "Shaded: 95 % DKW confidence band."


def scope_color(s: str) -> str:
    return SCOPE_COLOR.get(s, PALETTE[7])


def is_profile(path: Path) -> bool:
    return (path / S.CONNECTIONS).is_file()


def render(page: Page, profile_dir: Path, tag: str) -> dict:
    """Add the profile's section; returns the counts shown (for cross-checks)."""
    summary = read_summary(profile_dir)
    trace = (summary.get("trace") or {}).get("path") or str(profile_dir)
    page.h(2, f"Profile: {trace}", nav=f"Profile {Path(trace).name}")
    page.p(f"Directory {profile_dir}; analyzer {(summary.get('tool') or {}).get('version', '?')}.", note=True)
    shown = {"packets": _packets(page, summary), "composition": _composition(page, summary)}

    conns = read_table(profile_dir, S.CONNECTIONS)
    scope = np.array(conns.column(S.SCOPE).fill_null("").to_pylist(), dtype=object)
    size = column(conns, S.ORIG_BYTES, 0.0) + column(conns, S.RESP_BYTES, 0.0)
    shown["connections"] = conns.num_rows

    page.h(3, "Connections")
    _scoped_ccdf(
        page,
        f"{tag}_sizes",
        "flow size (payload bytes)",
        size,
        scope,
        f"Flow sizes (orig + resp payload bytes) per scope; connections without payload count in n at 0. {BAND}",
    )
    _scoped_ccdf(
        page,
        f"{tag}_durations",
        "connection duration (s)",
        column(conns, S.DURATION),
        scope,
        f"Connection durations (Zeek semantics) per scope. {BAND}",
    )
    f, ax = fig()
    drawn = False
    for name, col, ls in (("DATA-ACK", S.RTT_DATA_ACK, "-"), ("handshake", S.RTT_HANDSHAKE, "--")):
        r = column(conns, col)
        for s in SCOPES:
            drawn |= ccdf(ax, r[scope == s], f"{s}, {name}", color=scope_color(s), ls=ls)
    _finish(
        page,
        f,
        ax,
        drawn,
        f"{tag}_rtt",
        "RTT per connection (s)",
        f"RTT per connection by DATA-ACK (solid) and by handshake (dashed), per scope (§9.3). {BAND}",
    )

    page.h(3, "Transfer decomposition (thesis §9.2)")
    _samples_ccdf(
        page,
        profile_dir,
        conns,
        scope,
        S.WARMUPS,
        S.WARMUP_S,
        f"{tag}_warmups",
        "warm-up before a train (s)",
        f"Warm-up time before each train, per scope and party (solid: orig = initiator; dashed: resp). {BAND}",
    )
    _samples_ccdf(
        page,
        profile_dir,
        conns,
        scope,
        S.TRAINS,
        S.SIZE_PKTS,
        f"{tag}_trains",
        "train size (packets)",
        f"Train sizes, per scope and party (solid: orig; dashed: resp). {BAND}",
    )
    f, ax = fig()
    drawn = False
    for s in SCOPES:
        for side in S.SIDES:
            drawn |= cdf(
                ax,
                column(conns, S.side_col(side, S.PACING_PER_PKT))[scope == s],
                f"{s}, {side}",
                color=scope_color(s),
                ls=SIDE_STYLE[side],
            )
    _finish(
        page,
        f,
        ax,
        drawn,
        f"{tag}_pacing",
        "pacing per data packet (s)",
        "Pacing per data packet per connection, CDF (negative: faster than the ideal TCP of §9.2). " + BAND,
    )

    page.h(3, "Distribution fits (thesis §8.3.2)")
    ts = np.sort(column(conns, S.TS))
    ts = ts[np.isfinite(ts)]
    for name, unit, values in (
        ("flow size", "bytes", size[size > 0]),
        ("flow inter-arrival", "s", np.diff(ts)),
    ):
        rep = fit_all(values, f"{name} ({unit})")
        if rep.best is None:
            page.p(f"{name}: {rep.reason}", note=True)
            continue
        _fit_figure(page, rep, values, name, unit, f"{tag}_qq_{name.split()[1]}")
        page.table(
            ["family", "parameters", "KS D", "QQ log10-RMS"],
            [
                [
                    f.family + (" (best)" if f.family == rep.best else ""),
                    ", ".join(f"{k}={v:.4g}" for k, v in f.params.items()),
                    f.ks_d,
                    f.qq_log10_rms,
                ]
                for f in rep.fits
            ],
        )

    page.h(3, "Load over time")
    _load(page, profile_dir, conns, scope, tag)
    return shown


def _fit_figure(page, rep, values, name, unit, fid) -> None:
    """QQ plot of every fitted family (left) and the empirical CCDF against the fitted
    ones (right): the body and the tail of the same fits."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[np.isfinite(x) & (x > 0)]
    m = min(len(x), 200)
    probs = (np.arange(1, m + 1) - 0.5) / m
    emp = np.quantile(x, probs)
    f, (qq, tail) = fig(10, 3.8, ncols=2)
    markers = ("o", "s", "^", "D", "v", "P")
    for i, ft in enumerate(rep.fits):
        if not np.isfinite(ft.ks_d) or ft.ks_d >= 1:
            continue
        dist = frozen(ft.family, ft.params)
        best = ft.family == rep.best
        label = f"{ft.family}{' (best)' if best else ''}, KS D={ft.ks_d:.3f}"
        with np.errstate(all="ignore"):
            model = dist.ppf(probs)
            ok = np.isfinite(model) & (model > 0)
            qq.plot(model[ok], emp[ok], markers[i % len(markers)], ms=3.5 if best else 2.5, mfc="none", label=label)
            grid = np.geomspace(x.min(), x.max(), 200)
            sf = dist.sf(grid)
        keep = sf > 0
        tail.plot(grid[keep], sf[keep], lw=2.0 if best else 1.0, ls="-" if best else ":", label=ft.family)
    lo, hi = emp.min(), emp.max()
    qq.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="y = x")
    qq.set_xscale("log")
    qq.set_yscale("log")
    qq.set_xlabel(f"model quantile ({unit})")
    qq.set_ylabel(f"empirical quantile ({unit})")
    qq.set_title(f"QQ: {name}")
    qq.legend(loc="upper left")
    ccdf(tail, x, "empirical", color="k")
    tail.set_xlabel(f"{name} ({unit})")
    tail.set_title(f"CCDF: {name} against the fits")
    lims = tail.get_ylim()
    tail.set_ylim(max(lims[0], 0.2 / len(x)), 1.5)
    tail.legend(loc="lower left")
    page.figure(
        f,
        fid,
        f"{name.capitalize()} ({rep.n} positive samples) against the four MLE fits: QQ over 200 quantiles "
        f"(left) and CCDFs (right, empirical with its 95 % DKW band); {rep.reason}.",
        wide=True,
    )


def _load(page, profile_dir, conns, scope, tag) -> None:
    """Load per adaptive bin, stacked by scope. The analyzer's load.parquet is exact
    (each packet in the bin of its own time) but its bins are fixed (--bin, 300 s by
    default); when it has at least 20 bins over the trace they are merged into the
    adaptive width, otherwise each connection's IP bytes are spread evenly over its
    lifetime [ts, ts + duration]."""
    load = read_table(profile_dir, "load.parquet", required=False)
    ts = column(conns, S.TS)
    dur = np.nan_to_num(column(conns, S.DURATION), nan=0.0)
    ok = np.isfinite(ts)
    if not ok.any():
        page.p("No connection with a timestamp: no load over time.", note=True)
        return
    t0 = float(ts[ok].min())
    t1 = float((ts[ok] + dur[ok]).max())
    width = bin_width(ts[ok], t1 - t0)
    source_bin = float(column(load, "bin_s")[0]) if load is not None and load.num_rows else None
    exact = source_bin is not None and (t1 - t0) / source_bin >= 20
    if exact:
        starts = column(load, "bin_start")
        t0, t1 = float(starts.min()), float(starts.max() + source_bin)
    span = t1 - t0
    scopes_present = sorted(set(scope.tolist()))
    if exact:
        k = max(1, round(width / source_bin))
        width = k * source_bin
        lscope = np.array(load.column(S.SCOPE).fill_null("").to_pylist(), dtype=object)
        idx = ((column(load, "bin_start") - t0) // width).astype(int)
        nb = int(idx.max()) + 1
        lbytes = column(load, "bytes", 0.0)
        per_scope = {s: np.bincount(idx[lscope == s], lbytes[lscope == s], minlength=nb) for s in sorted(set(lscope))}
        how = (
            f"from the analyzer's load.parquet (exact: each packet in the bin of its own time), "
            f"{k} x {source_bin:g} s analyzer bins per bar"
        )
    else:
        nb = int(span // width) + 1  # the last edge lies past the last byte
        edges = t0 + width * np.arange(nb + 1)
        ip_bytes = np.nan_to_num(column(conns, S.ORIG_IP_BYTES, 0.0)) + np.nan_to_num(
            column(conns, S.RESP_IP_BYTES, 0.0)
        )
        per_scope = {s: _spread(ts[ok & (scope == s)], dur[ok & (scope == s)], ip_bytes[ok & (scope == s)], edges)
                     for s in scopes_present}  # fmt: skip
        how = "spreading each connection's IP bytes evenly over its lifetime [ts, ts + duration]" + (
            f" (the analyzer's {source_bin:g} s bins of load.parquet are too coarse for this trace)"
            if source_bin
            else ""
        )
    unit, scale = time_unit(span)
    f, ax = fig(10, 3.4)
    edges = np.arange(nb + 1) * width / scale
    bottom = np.zeros(nb + 1)
    for s, b in per_scope.items():
        if not b.sum():
            continue
        rate = np.append(b, b[-1]) * 8 / width / 1e6  # step="post" holds the last value to the last edge
        ax.fill_between(edges, bottom, bottom + rate, step="post", lw=0, color=scope_color(s), label=s or "(no scope)")
        bottom += rate
    ax.step(edges, bottom, where="post", color="k", lw=0.6)  # the total
    ax.set_xlim(0, nb * width / scale)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(f"time since the first bin ({unit})")
    ax.set_ylabel("load (Mb/s)")
    ax.legend(loc="upper right")
    wstr = f"{width * 1e3:g} ms" if width < 1 else f"{width:g} s"
    page.figure(
        f,
        f"{tag}_load",
        f"Load (bits per second, IP level, both directions) in {nb} bins of {wstr}, stacked by scope; "
        f"bin width by Freedman–Diaconis on the connection start times, kept between 20 and 100 bins; {how}.",
        wide=True,
    )


def _spread(ts, dur, nbytes, edges, chunk: int = 20_000) -> np.ndarray:
    """Bytes per bin when each connection sends its bytes at a constant rate over
    [ts, ts + dur] (all at ts when dur is 0)."""
    out = np.zeros(len(edges) - 1)
    for i in range(0, len(ts), chunk):
        a, d, b = ts[i : i + chunk, None], dur[i : i + chunk, None], nbytes[i : i + chunk, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(d > 0, np.clip((edges[None, :] - a) / d, 0, 1), (edges[None, :] > a).astype(float))
        out += (np.diff(frac, axis=1) * b).sum(axis=0)
    return out


def _packets(page: Page, summary: dict) -> dict:
    pk = summary.get("packets") or {}
    if not pk:
        return {}
    rows = [["read", pk.get("read")], ["decoded", pk.get("decoded")]]
    rows += [[f"skipped: {k}", v] for k, v in sorted((pk.get("skipped") or {}).items())]
    page.table(["packets", "count"], rows)
    return {"read": pk.get("read"), "decoded": pk.get("decoded")}


def _composition(page: Page, summary: dict) -> list:
    comp = summary.get("composition") or {}
    rows = []
    for scope, cats in sorted(comp.items()):
        for cat, c in sorted(cats.items()):
            up, down = c.get("upload_bytes", 0), c.get("download_bytes", 0)
            rows.append(
                [
                    scope,
                    cat,
                    c.get("cnxs"),
                    c.get("packets"),
                    c.get("bytes"),
                    up,
                    down,
                    down / (up + down) if up + down else None,
                ]
            )
    if rows:
        page.h(3, "Composition (thesis Tables 8.1–8.2)")
        page.table(
            ["scope", "category", "connections", "packets", "bytes", "upload B", "download B", "download share"], rows
        )
    return rows


def _scoped_ccdf(page, name, xlabel, values, scope, caption):
    f, ax = fig()
    drawn = False
    for s in sorted(set(scope.tolist())):
        drawn |= ccdf(ax, values[scope == s], s or "(no scope)", color=scope_color(s))
    _finish(page, f, ax, drawn, name, xlabel, caption)


def _samples_ccdf(page, profile_dir, conns, scope, table, col, name, xlabel, caption):
    t = read_table(profile_dir, table, [S.CONN, S.SIDE, col], required=False)
    f, ax = fig()
    drawn = False
    if t is not None:
        sc = scope[sample_connections(t, conns.num_rows, Path(profile_dir) / table)]
        side = np.array(t.column(S.SIDE).to_pylist(), dtype=object)
        v = column(t, col)
        for s in SCOPES:
            for sd in S.SIDES:
                drawn |= ccdf(ax, v[(sc == s) & (side == sd)], f"{s}, {sd}", color=scope_color(s), ls=SIDE_STYLE[sd])
    _finish(page, f, ax, drawn, name, xlabel, caption)


def _finish(page, f, ax, drawn, name, xlabel, caption):
    import matplotlib.pyplot as plt

    if not drawn:
        plt.close(f)
        page.p(f"{caption} No samples.", note=True)
        return
    ax.set_xlabel(xlabel)
    ax.legend(loc="best")
    page.figure(f, name, caption)
