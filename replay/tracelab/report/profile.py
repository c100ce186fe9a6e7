"""Report section for one analyzer profile directory (docs/reference/algorithms.md §9, thesis ch. 8–9):
composition tables, CDFs of flow sizes, durations, RTTs, warm-ups, trains and pacing,
QQ plots of the fitted flow sizes and inter-arrivals, load over time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tracelab_models import schema as S
from tracelab_models.distributions import fit_all, qq_plot
from tracelab_models.profile import column, read_summary, read_table, sample_connections

from .html import Page, cdf, fig, log_if_wide

SCOPES = (S.SCOPE_INTRANET, S.SCOPE_INTERNET)


def is_profile(path: Path) -> bool:
    return (path / S.CONNECTIONS).is_file()


def render(page: Page, profile_dir: Path, tag: str) -> dict:
    """Add the profile's section; returns the counts shown (for cross-checks)."""
    summary = read_summary(profile_dir)
    trace = (summary.get("trace") or {}).get("path") or str(profile_dir)
    page.h(2, f"Profile: {trace}")
    page.p(f"Directory {profile_dir}; analyzer {(summary.get('tool') or {}).get('version', '?')}.", note=True)
    shown = {"packets": _packets(page, summary), "composition": _composition(page, summary)}

    conns = read_table(profile_dir, S.CONNECTIONS)
    scope = np.array(conns.column(S.SCOPE).fill_null("").to_pylist(), dtype=object)
    size = column(conns, S.ORIG_BYTES, 0.0) + column(conns, S.RESP_BYTES, 0.0)
    shown["connections"] = conns.num_rows

    page.h(3, "Connections")
    _scoped_cdf(
        page,
        f"{tag}_sizes",
        "flow size (payload bytes)",
        size,
        scope,
        size > 0,
        "Flow sizes (orig + resp payload bytes, connections with payload), per scope.",
    )
    _scoped_cdf(
        page,
        f"{tag}_durations",
        "duration (s)",
        column(conns, S.DURATION),
        scope,
        None,
        "Connection durations (Zeek semantics), per scope.",
    )
    f, ax = fig()
    drawn = False
    rtts = {name: column(conns, col) for name, col in (("DATA-ACK", S.RTT_DATA_ACK), ("handshake", S.RTT_HANDSHAKE))}
    for name, r in rtts.items():
        for s in SCOPES:
            drawn |= cdf(ax, r[scope == s], f"{s}, {name}")
    _finish(
        page,
        f,
        ax,
        drawn,
        f"{tag}_rtt",
        "RTT (s)",
        "RTT per connection by DATA-ACK and by handshake (§9.3).",
        data=np.concatenate(list(rtts.values())),
    )

    page.h(3, "Transfer decomposition (thesis §9.2)")
    _samples_cdf(
        page,
        profile_dir,
        conns,
        scope,
        S.WARMUPS,
        S.WARMUP_S,
        f"{tag}_warmups",
        "warm-up (s)",
        "Warm-up time before each train, per scope and party (orig = initiator).",
    )
    _samples_cdf(
        page,
        profile_dir,
        conns,
        scope,
        S.TRAINS,
        S.SIZE_PKTS,
        f"{tag}_trains",
        "train size (packets)",
        "Train sizes, per scope and party.",
    )
    f, ax = fig()
    drawn = False
    for s in SCOPES:
        for side in S.SIDES:
            drawn |= cdf(ax, column(conns, S.side_col(side, S.PACING_PER_PKT))[scope == s], f"{s}, {side}")
    _finish(
        page,
        f,
        ax,
        drawn,
        f"{tag}_pacing",
        "pacing per data packet (s)",
        "Pacing per data packet per connection (negative: faster than the ideal TCP of §9.2).",
        log=False,
    )

    page.h(3, "Distribution fits (QQ, thesis §8.3.2)")
    ts = np.sort(column(conns, S.TS))
    ts = ts[np.isfinite(ts)]
    for name, values in (("flow size (bytes)", size[size > 0]), ("flow inter-arrival (s)", np.diff(ts))):
        rep = fit_all(values, name)
        if rep.best is None:
            page.p(f"{name}: {rep.reason}", note=True)
            continue
        path = page.image_path(f"{tag}_qq_{name.split()[1]}")
        qq_plot(rep, values, path)
        page.show(path, f"QQ plots of {name} against the four MLE fits; {rep.reason}.")
        page.table(
            ["family", "parameters", "KS D", "QQ log10-RMS"],
            [
                [f.family, ", ".join(f"{k}={v:.4g}" for k, v in f.params.items()), f.ks_d, f.qq_log10_rms]
                for f in rep.fits
            ],
        )

    page.h(3, "Load over time")
    load = read_table(profile_dir, "load.parquet", required=False)
    if load is None or load.num_rows == 0:
        page.p("No load.parquet in this profile.", note=True)
    else:
        f, ax = fig(7, 3.6)
        bin_s = column(load, "bin_s")[0]
        t0 = column(load, "bin_start").min()
        starts = column(load, "bin_start")
        edges = np.unique(starts)
        bottom = np.zeros(len(edges))
        scopes = np.array(load.column(S.SCOPE).to_pylist(), dtype=object)
        mbps = column(load, "bytes") * 8 / bin_s / 1e6
        for s in sorted(set(scopes.tolist())):
            # Stacked bars: the top of the stack is the total load of the bin.
            rate = np.array([mbps[(starts == e) & (scopes == s)].sum() for e in edges])
            ax.bar((edges - t0) / 60, rate, width=bin_s / 60, bottom=bottom, align="edge", label=s)
            bottom += rate
        ax.set_xlabel(f"minutes since the first bin ({bin_s:g} s bins)")
        ax.set_ylabel("Mb/s")
        ax.legend()
        ax.grid(alpha=0.3)
        page.figure(f, f"{tag}_load", "Load per bin, stacked by scope (bytes x 8 / bin length).")
    return shown


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


def _scoped_cdf(page, name, xlabel, values, scope, mask, caption):
    f, ax = fig()
    drawn = False
    keep = np.ones(len(values), bool) if mask is None else mask
    for s in sorted(set(scope.tolist())):
        drawn |= cdf(ax, values[keep & (scope == s)], s or "(no scope)")
    _finish(page, f, ax, drawn, name, xlabel, caption, data=values[keep])


def _samples_cdf(page, profile_dir, conns, scope, table, col, name, xlabel, caption):
    t = read_table(profile_dir, table, [S.CONN, S.SIDE, col], required=False)
    f, ax = fig()
    drawn = False
    if t is not None:
        sc = scope[sample_connections(t, conns.num_rows, Path(profile_dir) / table)]
        side = np.array(t.column(S.SIDE).to_pylist(), dtype=object)
        v = column(t, col)
        for s in SCOPES:
            for sd in S.SIDES:
                drawn |= cdf(ax, v[(sc == s) & (side == sd)], f"{s}, {sd}")
        _finish(page, f, ax, drawn, name, xlabel, caption, data=v)
    else:
        _finish(page, f, ax, False, name, xlabel, caption)


def _finish(page, f, ax, drawn, name, xlabel, caption, data=None, log=True):
    import matplotlib.pyplot as plt

    if not drawn:
        plt.close(f)
        page.p(f"{caption} No samples.", note=True)
        return
    ax.set_xlabel(xlabel)
    if log and data is not None:
        log_if_wide(ax, data)
    ax.legend(fontsize=7)
    page.figure(f, name, caption)
