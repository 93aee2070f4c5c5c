"""Figures a browser can draw: curves thinned and heat maps block-averaged beyond a point budget.

A study of 1,000 speakers has 8,000 x 1,000 scores per condition: a figure that sent every
score, every operating point or every cell of a speaker-by-speaker matrix would send millions
of points, which a browser draws slowly or not at all. :func:`decimate_figure` returns a figure
of at most :data:`MAX_POINTS` points for the screen; the full figure (and the tables) stay
what the downloads are made from.

- **Curves and point clouds** (scatter and bar traces): :func:`curve_indices` keeps both ends
  and, in each of a few thousand runs of consecutive points, the first and last point and the
  points of lowest and highest x and y. What is kept is a subsequence of the points, in their
  order: a monotone curve stays monotone, its corners and extremes stay where they were, and
  a curve under the budget is returned unchanged.
- **Heat maps**: :func:`block_means` averages blocks of f x f cells (NaN cells left out of the
  mean), drawn at the blocks' centres in the original row and column positions, so shapes
  drawn on the full matrix (group boundaries) keep their place.

The figure gets a note that says how many points it shows of how many.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike, NDArray

from voxmetrics.errors import kept_warnings

__all__ = [
    "DECIMATED_META",
    "FULL_DATA_NOTE",
    "MAX_POINTS",
    "block_means",
    "curve_indices",
    "decimate_figure",
    "figure_points",
    "trace_points",
]

MAX_POINTS = 200_000
"""Points a figure may send to the browser before it is decimated (all traces together)."""

FULL_DATA_NOTE = "the HTML download has every point"
"""The end of the note on a decimated figure: where every point is (the page's downloads)."""

DECIMATED_META = "decimated"
"""Key of ``fig.layout.meta`` that says ``{"shown": n, "total": N}`` on a decimated figure."""

_CURVES = frozenset({"scatter", "scattergl", "bar"})
_HEATMAPS = frozenset({"heatmap", "heatmapgl"})
_RAW = frozenset({"histogram", "box", "violin"})  # counted, not decimated (their stats need all)


def _length(values: Any) -> int:
    if values is None:
        return 0
    try:
        return len(values)
    except TypeError:
        return 0


def trace_points(trace: Any) -> int:
    """Points one trace sends: its cells for a heat map, its x (or y) values otherwise.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> trace_points(go.Scatter(y=[1, 2, 3])), trace_points(go.Heatmap(z=[[1, 2], [3, 4]]))
    (3, 4)
    """
    kind = trace.type
    if kind in _HEATMAPS:
        z = trace.z
        if z is None:
            return 0
        return int(z.size) if isinstance(z, np.ndarray) else sum(_length(row) for row in z)
    if kind in _CURVES or kind in _RAW:
        return max(_length(trace.x), _length(trace.y))
    return 0


def figure_points(fig: go.Figure) -> int:
    """Points the figure sends to the browser, all traces together (:func:`trace_points`).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> figure_points(go.Figure([go.Scatter(x=[0, 1], y=[0, 1]), go.Bar(y=[1, 2, 3])]))
    5
    """
    return sum(trace_points(t) for t in fig.data)


def _numeric(values: Any, n: int) -> NDArray[np.float64] | None:
    """``values`` as floats when they are n numbers (None for labels, dates or missing)."""
    if values is None or _length(values) != n:
        return None
    arr = np.asarray(values)
    if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        if arr.dtype != object:
            return None
        try:
            arr = arr.astype(np.float64)  # None -> nan: a gap in the line
        except (TypeError, ValueError):
            return None
    return arr.astype(np.float64, copy=False)


def curve_indices(x: ArrayLike | None, y: ArrayLike | None, *, limit: int) -> NDArray[np.intp]:
    """Indices of at most ``limit`` points of a curve that keep its shape, ascending.

    Both ends are kept. The points between are cut into runs of consecutive points; each run
    keeps its first and last point, its points of lowest and highest ``y`` and ``x`` (those
    that are numbers) and its first gap (a NaN, which breaks a line). A curve of at most
    ``limit`` points keeps every point.

    Parameters
    ----------
    x, y : array_like or None
        The points' coordinates (labels or None where a coordinate is not numeric); at least
        one of them has the curve's length.
    limit : int
        At most this many indices (at least 2).

    Returns
    -------
    ndarray of intp
        Ascending indices into the curve: a subsequence, so a monotone curve stays monotone.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.r_[np.zeros(50), 5.0, np.zeros(49)]
    >>> idx = curve_indices(None, y, limit=12)
    >>> int(idx.size) <= 12, int(idx[0]), int(idx[-1]), 50 in idx
    (True, 0, 99, True)
    >>> curve_indices(None, [3.0, 1.0, 2.0], limit=5).tolist()
    [0, 1, 2]
    """
    if limit < 2:
        raise ValueError(f"`limit` must be at least 2, got {limit}.")
    n = max(_length(x), _length(y))
    if n <= limit:
        return np.arange(n, dtype=np.intp)
    columns = [c for c in (_numeric(y, n), _numeric(x, n)) if c is not None]
    gaps = [np.isnan(c) for c in columns]
    any_gap = bool(gaps) and bool(np.logical_or.reduce(gaps).any())
    per_run = 2 + 2 * len(columns) + int(any_gap)  # first, last, extremes, first gap
    runs = (limit - 2) // per_run
    inner = n - 2
    if runs < 1:
        return np.unique(np.round(np.linspace(0, n - 1, limit)).astype(np.intp))
    width = math.ceil(inner / runs)
    runs = math.ceil(inner / width)  # only the last run may be short
    start = 1 + width * np.arange(runs, dtype=np.intp)
    stop = np.minimum(start + width, n - 1)
    kept = [np.array([0, n - 1], dtype=np.intp), start, stop - 1]
    pad = runs * width - inner

    def blocks(values: NDArray[np.float64], fill: float) -> NDArray[np.float64]:
        return np.concatenate([values[1 : n - 1], np.full(pad, fill)]).reshape(runs, width)

    for column in columns:
        low = blocks(np.where(np.isnan(column), np.inf, column), np.inf)
        high = blocks(np.where(np.isnan(column), -np.inf, column), -np.inf)
        kept += [start + low.argmin(axis=1), start + high.argmax(axis=1)]
    if any_gap:
        gap = blocks(np.logical_or.reduce(gaps).astype(np.float64), 0.0)
        has = gap.max(axis=1) > 0
        kept.append((start + gap.argmax(axis=1))[has])
    idx = np.unique(np.concatenate(kept))
    return idx[idx < n]


def block_means(z: ArrayLike, *, limit: int) -> tuple[NDArray[np.float64], int]:
    """A matrix averaged over blocks of f x f cells, so that it has at most ``limit`` cells.

    Parameters
    ----------
    z : array_like, 2-D
        The matrix (numbers; NaN cells are left out of their block's mean).
    limit : int
        At most this many cells in the result (at least 1).

    Returns
    -------
    means : ndarray, 2-D
        ``ceil(rows / f) x ceil(cols / f)`` block means (the last block of a row or column
        may be smaller); ``z`` itself, as floats, when it has at most ``limit`` cells.
    f : int
        The block side (1: not aggregated).

    Examples
    --------
    >>> import numpy as np
    >>> m, f = block_means(np.arange(16.0).reshape(4, 4), limit=4)
    >>> f, m.tolist()
    (2, [[2.5, 4.5], [10.5, 12.5]])
    """
    if limit < 1:
        raise ValueError(f"`limit` must be at least 1, got {limit}.")
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"`z` must be a 2-D matrix, got {z.ndim} dimension(s).")
    rows, cols = z.shape
    if z.size <= limit:
        return z, 1
    f = max(1, math.isqrt(math.ceil(z.size / limit)))
    while math.ceil(rows / f) * math.ceil(cols / f) > limit:
        f += 1
    r, c = math.ceil(rows / f), math.ceil(cols / f)
    padded = np.full((r * f, c * f), np.nan)
    padded[:rows, :cols] = z
    with kept_warnings(RuntimeWarning):  # dropped: an all-NaN block stays NaN
        means = np.nanmean(padded.reshape(r, f, c, f), axis=(1, 3))
    return means, f


def _take(value: Any, idx: NDArray[np.intp], n: int) -> Any:
    """``value`` at ``idx`` when it is one entry per point (length n), else as it is."""
    if isinstance(value, Mapping):
        return {k: _take(v, idx, n) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n:
        return value[idx]
    if isinstance(value, list | tuple) and len(value) == n:
        return [value[i] for i in idx.tolist()]
    return value


def _budgets(sizes: list[int], limit: int) -> list[int]:
    """Share ``limit`` points among traces: small ones keep theirs, large ones split the rest."""
    budget, left = [0] * len(sizes), limit
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for k, i in enumerate(order):
        share = left // (len(sizes) - k)
        budget[i] = min(sizes[i], share)
        left -= budget[i]
    return budget


def _axis_centres(values: Any, n: int, f: int, blocks: int) -> NDArray[np.float64]:
    """Centres of the blocks: in the trace's own coordinates when numeric, else positions."""
    numeric = _numeric(values, n)
    base = numeric if numeric is not None else np.arange(n, dtype=np.float64)
    padded = np.concatenate([base, np.full(blocks * f - n, np.nan)]).reshape(blocks, f)
    with kept_warnings(RuntimeWarning):  # dropped: an all-NaN block stays NaN
        return np.nanmean(padded, axis=1)


def _heatmap(trace: dict[str, Any], limit: int) -> dict[str, Any]:
    z = np.asarray(trace["z"], dtype=np.float64)
    means, f = block_means(z, limit=limit)
    if f == 1:
        return trace
    rows, cols = z.shape
    out = {k: v for k, v in trace.items() if k not in {"customdata", "text", "hovertext"}}
    out["z"] = means
    out["x"] = _axis_centres(trace.get("x"), cols, f, means.shape[1])
    out["y"] = _axis_centres(trace.get("y"), rows, f, means.shape[0])
    for key in ("x0", "dx", "y0", "dy"):
        out.pop(key, None)
    if not {"zmin", "zmax", "zmid"} & trace.keys() and np.isfinite(z).any():
        out["zmin"], out["zmax"] = float(np.nanmin(z)), float(np.nanmax(z))  # the full range
    out["hovertemplate"] = (
        f"mean of a block of {f} × {f} cells<br>around x %{{x:.0f}}, y %{{y:.0f}}"
        "<br>%{z:.3g}<extra></extra>"
    )
    return out


def _note(fig: go.Figure, shown: int, total: int, full: str) -> None:
    fig.add_annotation(
        text=f"Decimated for display: {shown:,} of {total:,} points "
        f"(curves keep their ends and extremes, heat maps show block means); {full}",
        xref="paper",
        yref="paper",
        x=1.0,
        y=1.0,
        xanchor="right",
        yanchor="bottom",
        yshift=4,
        showarrow=False,
        font={"size": 10, "color": "#666666"},
    )


def decimate_figure(
    fig: go.Figure, *, limit: int = MAX_POINTS, full: str = FULL_DATA_NOTE
) -> go.Figure:
    """The figure with at most about ``limit`` points, for the browser; ``fig`` is not changed.

    A figure of at most ``limit`` points (:func:`figure_points`) is returned as it is (the
    same object). Otherwise the points are shared among the traces (small traces keep all of
    theirs), each large curve keeps :func:`curve_indices` of its points (every per-point
    attribute, e.g. ``customdata`` or marker colours, follows) and each large heat map becomes
    its :func:`block_means`; histograms, boxes and violins are kept whole (their statistics
    need every value). The new figure carries a note with the number of points shown and
    ``layout.meta["decimated"] = {"shown": ..., "total": ...}``.

    Parameters
    ----------
    fig : go.Figure
        The full figure (what the downloads are made from).
    limit : int
        Points the browser gets, at most (and at least 4 per trace).
    full : str
        Where the full data is, for the note (by default the figure's HTML download).

    Returns
    -------
    go.Figure
        ``fig`` itself, or a decimated copy.

    Examples
    --------
    >>> import numpy as np
    >>> import plotly.graph_objects as go
    >>> fig = go.Figure(go.Scatter(x=np.arange(1000.0), y=np.sin(np.arange(1000.0))))
    >>> small = decimate_figure(fig, limit=100)
    >>> figure_points(small) <= 100, small.layout.meta["decimated"]["total"]
    (True, 1000)
    >>> decimate_figure(fig) is fig
    True
    """
    sizes = [trace_points(t) for t in fig.data]
    total = sum(sizes)
    if total <= limit:
        return fig
    fixed = sum(s for t, s in zip(fig.data, sizes, strict=True) if t.type in _RAW)
    budgets = _budgets(
        [0 if t.type in _RAW else s for t, s in zip(fig.data, sizes, strict=True)],
        max(limit - fixed, 0),
    )
    data = []
    for trace, size, budget in zip(fig.data, sizes, budgets, strict=True):
        d = trace.to_plotly_json()
        if size > budget and trace.type in _HEATMAPS:
            d = _heatmap(d, max(budget, 1))
        elif size > budget and trace.type in _CURVES:
            idx = curve_indices(d.get("x"), d.get("y"), limit=max(budget, 2))
            for axis in ("x", "y"):  # implicit positions (x0 + k dx) made explicit
                if _length(d.get(axis)) != size:
                    d[axis] = d.get(f"{axis}0", 0) + d.get(f"d{axis}", 1) * np.arange(size)
            d = {k: _take(v, idx, size) for k, v in d.items()}
        data.append(d)
    out = go.Figure({"data": data, "layout": fig.layout.to_plotly_json()})
    shown = figure_points(out)
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    out.update_layout(meta={**meta, DECIMATED_META: {"shown": shown, "total": total}})
    _note(out, shown, total, full)
    return out
