"""Workload models (`*.model.json` of `tracelab model derive`) as engine sources.

`source_spec(model, load=0.9, stop="1s")` turns a validated model into one
`model(...)` source of the engine (replay/engine/src/sources.cc, where the
stream is described): connection arrivals from the fitted inter-arrival
distribution, sizes from the fitted flow-size distribution, the intranet /
internet x download / upload split of the bytes, per-side packet sizes, train
sizes, warm-ups and pacing, and the RTT of each scope. The packets of the
four scope x direction groups are the classes below, in this order.

Choices the model leaves open, stated here and returned as notes:
* the family of each fitted variable is the model's `best` (lowest KS
  distance) unless one is asked for;
* a Pareto flow size is bounded at `max_flow` (default 100 MB), which makes
  its mean finite even for alpha <= 1; a Pareto inter-arrival with
  alpha <= 1 has no mean to rescale, so the next-ranked family is used;
* a scope without an RTT estimate takes the model's legacy (overall) RTT.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .config import ConfigError

CLASSES = ("intranet-download", "intranet-upload", "internet-download", "internet-upload")
SCOPES = ("intranet", "internet")
FAMILIES = ("exponential", "lognormal", "weibull", "pareto")
DEFAULT_MAX_FLOW = 100e6  # bytes


def load_model(path: Path) -> dict[str, Any]:
    """Read and validate a model file; errors name the file and the field."""
    from tracelab_models.profile import ProfileError
    from tracelab_models.workload import load

    try:
        return load(path)
    except (ProfileError, ValueError) as e:
        raise ConfigError(str(e)) from None


def _ps(seconds: float) -> str:
    return f"{round(seconds * 1e12)}ps"


def _num(x: float) -> str:
    return format(float(x), ".12g")


def choose_fit(report: dict[str, Any], family: str | None, what: str) -> dict[str, Any]:
    """The fit of `family`, or the model's ranking (lowest KS distance first)."""
    fits = {f["family"]: f for f in report["fits"]}
    if family is not None:
        if family not in FAMILIES:
            raise ConfigError(f"{what}: unknown family {family!r} (known: {', '.join(FAMILIES)})")
        if family not in fits:
            raise ConfigError(f"{what}: the model has no {family} fit ({report['reason']})")
        return fits[family]
    if not report["fits"]:
        raise ConfigError(f"{what}: the model has no fitted distribution ({report['reason']})")
    return min(report["fits"], key=lambda f: (f["ks_d"], f["qq_log10_rms"]))


def distribution(fit: dict[str, Any], *, time: bool, max_value: float | None = None) -> str:
    """The engine text of a fitted distribution (seconds or bytes)."""
    q = _ps if time else _num
    p = fit["params"]
    family = fit["family"]
    if family == "exponential":
        return f"exp({q(p['scale'])})"
    if family == "lognormal":
        return f"lognormal({q(math.exp(p['mu']))}, {_num(p['sigma'])})"
    if family == "weibull":
        return f"weibull({_num(p['shape'])}, {q(p['scale'])})"
    if max_value is not None:
        if not p["xm"] < max_value:
            raise ConfigError(f"pareto xm={p['xm']} is not below the bound {max_value}")
        return f"bpareto({_num(p['alpha'])}, {q(p['xm'])}, {q(max_value)})"
    return f"pareto({_num(p['alpha'])}, {q(p['alpha'] * p['xm'] / (p['alpha'] - 1))})"


def _histogram(h: dict[str, Any]) -> str:
    items = [f"{round(v)}:{c}" for v, c in zip(h["values"], h["counts"], strict=True) if c > 0]
    return "hist(" + ", ".join(items) + ")"


def _quantiles(e: dict[str, Any]) -> str | None:
    """An empirical distribution (quantiles v at probabilities p) as the
    engine's equally spaced quantile function; negative values are 0."""
    if e["n"] == 0 or not e["p"]:
        return None
    import numpy as np

    grid = np.linspace(0, 1, 101)
    v = np.interp(grid, e["p"], e["v"])
    return "quantiles(" + ", ".join(_ps(max(0.0, x)) for x in v) + ")"


def source_spec(
    model: dict[str, Any],
    *,
    load: float | None = None,
    rate: float | None = None,
    stop: str = "1s",
    size_family: str | None = None,
    gap_family: str | None = None,
    max_flow: float = DEFAULT_MAX_FLOW,
    peak: str = "1G",
    cls: int = 0,
) -> tuple[str, list[str]]:
    """(engine source spec, notes on the choices made) for a validated model.
    `load` (of the first link) or `rate` (connections/s) rescales the fitted
    inter-arrivals; with neither they are used as fitted."""
    if load is not None and rate is not None:
        raise ConfigError("give --load or a connection rate, not both")
    notes: list[str] = []
    size_fit = choose_fit(model["flows"]["size_bytes"], size_family, "flow size")
    size = distribution(size_fit, time=False, max_value=max_flow if size_fit["family"] == "pareto" else None)
    notes.append(
        f"flow size: {size_fit['family']} {size_fit['params']}"
        + (f", bounded at {max_flow:.0f} B" if size_fit["family"] == "pareto" else "")
    )
    gap_report = model["flows"]["interarrival_s"]
    gap_fit = choose_fit(gap_report, gap_family, "flow inter-arrival")
    if gap_fit["family"] == "pareto" and not gap_fit["params"]["alpha"] > 1:
        if gap_family is not None:
            raise ConfigError(f"flow inter-arrival: pareto alpha={gap_fit['params']['alpha']:.3g} <= 1 has no mean")
        ranked = sorted(
            (f for f in gap_report["fits"] if f["family"] != "pareto"), key=lambda f: (f["ks_d"], f["qq_log10_rms"])
        )
        notes.append(
            f"flow inter-arrival: pareto alpha={gap_fit['params']['alpha']:.3g} has no mean; "
            f"using the next-ranked {ranked[0]['family']}"
        )
        gap_fit = ranked[0]
    gap = distribution(gap_fit, time=True)
    notes.append(f"flow inter-arrival: {gap_fit['family']} {gap_fit['params']}")

    topo = model["topological"]
    total = sum(topo["shares"][s]["download"] + topo["shares"][s]["upload"] for s in SCOPES)
    if not total > 0:
        raise ConfigError("the model's topological shares are all 0: no traffic to generate")
    parts = [f"size={size}", f"gap={gap}", f"peak={peak}", f"cls={cls}", f"stop={stop}"]
    if load is not None:
        parts.append(f"load={_num(load)}")
    if rate is not None:
        parts.append(f"rate={_num(rate)}")
    for scope in SCOPES:
        sh = topo["shares"][scope]
        share = sh["download"] + sh["upload"]
        if share <= 0:
            continue
        rtt = topo["rtt_s"][scope]["mean"]
        if rtt is None:
            rtt = model["legacy"]["rtt_s"] or 0.0
            notes.append(f"{scope}: no RTT estimate; using the legacy RTT {rtt * 1e3:.3f} ms")
        items = [f"share={_num(share / total)}", f"up={_num(sh['upload'] / share)}", f"rtt={_ps(rtt)}"]
        for side in ("orig", "resp"):
            app = model["apps"][scope][side]
            carries = sh["upload" if side == "orig" else "download"] > 0
            if carries and not any(app["packet_size_bytes"]["counts"]):
                raise ConfigError(
                    f"apps.{scope}.{side}.packet_size_bytes is empty but the model gives "
                    f"{scope} {'upload' if side == 'orig' else 'download'} bytes"
                )
            items.append(f"{side}_size={_histogram(app['packet_size_bytes'])}")
            if any(app["train_size_pkts"]["counts"]):
                items.append(f"{side}_train={_histogram(app['train_size_pkts'])}")
            for key, name in (("warmup_s", "warmup"), ("pacing_per_pkt_s", "pacing")):
                q = _quantiles(app[key])
                if q is not None:
                    items.append(f"{side}_{name}={q}")
        parts.append(f"{scope}='scope(" + ", ".join(items) + ")'")
    return "model(" + ", ".join(parts) + ")", notes
