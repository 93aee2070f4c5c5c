"""Display summaries of the data: score histograms computed with numpy, never raw points.

A T x N matrix can hold a hundred million scores; the dashboard draws their
distribution from a few dozen counts computed here, so no raw score goes to the browser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics.data.model import ScoreMatrix
from voxmetrics.errors import VoxMetricsInputError

if TYPE_CHECKING:
    from voxmetrics.data.study import Condition

__all__ = ["ScoreHistogram", "condition_facts", "describe_matrix", "score_histogram"]


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class ScoreHistogram:
    """Counts of the mated and non-mated scores of a matrix on common bin edges.

    Build with :func:`score_histogram`.
    """

    edges: NDArray[np.float64]
    """B + 1 increasing bin edges shared by both pools (score units)."""
    mated: NDArray[np.int64]
    """B counts of the T mated scores ``S[i, m_i]``."""
    non_mated: NDArray[np.int64]
    """B counts of the T(N-1) non-mated scores."""
    source: str = ""
    """Where the scores came from, for titles."""

    @property
    def n_bins(self) -> int:
        """B, the number of bins."""
        return int(self.mated.size)

    @property
    def n_mated(self) -> int:
        """Number of mated scores counted (T)."""
        return int(self.mated.sum())

    @property
    def n_non_mated(self) -> int:
        """Number of non-mated scores counted (T(N-1))."""
        return int(self.non_mated.sum())

    @property
    def centers(self) -> NDArray[np.float64]:
        """B bin centres."""
        return (self.edges[:-1] + self.edges[1:]) / 2.0

    @property
    def widths(self) -> NDArray[np.float64]:
        """B bin widths."""
        return np.diff(self.edges)

    @property
    def mated_density(self) -> NDArray[np.float64]:
        """Mated counts normalised so that their histogram integrates to 1."""
        return self.mated / (max(self.n_mated, 1) * self.widths)

    @property
    def non_mated_density(self) -> NDArray[np.float64]:
        """Non-mated counts normalised so that their histogram integrates to 1."""
        return self.non_mated / (max(self.n_non_mated, 1) * self.widths)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: edges and both count lists."""
        return {
            "edges": self.edges.tolist(),
            "mated": self.mated.tolist(),
            "non_mated": self.non_mated.tolist(),
            "source": self.source,
        }


def score_histogram(sm: ScoreMatrix, *, bins: int = 60) -> ScoreHistogram:
    """Histogram the mated and non-mated scores of a matrix on common, equal-width bins.

    The non-mated counts are the counts of the whole matrix minus the mated ones, so the
    T(N-1) non-mated scores are never copied out of the matrix (memory stays at one pass
    over ``sm.scores``). A sparse trial list counts its listed pairs.

    Parameters
    ----------
    sm : ScoreMatrix
        T x N scores.
    bins : int, default 60
        Number of equal-width bins between the lowest and the highest score.

    Returns
    -------
    ScoreHistogram
        ``bins + 1`` edges, ``bins`` mated counts (summing to T) and ``bins`` non-mated counts
        (summing to T(N-1)).

    Raises
    ------
    VoxMetricsInputError
        If ``bins`` is not a positive integer.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> h = score_histogram(sm, bins=2)
    >>> h.edges.tolist(), h.mated.tolist(), h.non_mated.tolist()
    ([0.1, 0.5, 0.9], [0, 2], [2, 0])
    """
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise VoxMetricsInputError(f"`bins` must be a positive integer, got {bins!r}.")
    sm = sm.pairwise_view()  # every listed pair, those of unenrolled speakers too
    scores = sm.scores
    if sm.mask is None:
        lo, hi = float(scores.min()), float(scores.max())
    else:  # a sparse trial list: its listed pairs (the unlisted cells are NaN)
        lo, hi = float(np.nanmin(scores)), float(np.nanmax(scores))
    if lo == hi:  # constant scores: one visible bin around the value
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, int(bins) + 1)
    mated, _ = np.histogram(sm.tar, bins=edges)
    if sm.mask is None:
        everything, _ = np.histogram(scores, bins=edges)
    else:
        everything = mated + np.histogram(sm.non, bins=edges)[0]
    return ScoreHistogram(
        edges=_readonly(edges),
        mated=_readonly(mated.astype(np.int64)),
        non_mated=_readonly((everything - mated).astype(np.int64)),
        source=sm.source,
    )


def describe_matrix(label: str, sm: ScoreMatrix) -> str:
    """One line saying what ``sm`` holds: its shape, left-out trials and, when sparse, its pairs.

    Trials of speakers not enrolled are counted apart: their pairs are kept as non-mated pairs.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> describe_matrix("eval", sm)
    'eval: T = 2 trials × N = 2 enrolled, 0 excluded'
    """
    t, n = sm.shape
    text = f"{label}: T = {t:,} trials × N = {n:,} enrolled, {sm.n_excluded_trials:,} excluded"
    if sm.n_other_trials:
        text += (
            f", {sm.n_other_trials:,} with a speaker not enrolled (non-mated pairs of the pairwise "
            "metrics)"
        )
    if sm.is_complete:
        return text
    full = sm.complete_rows()
    rows = "none" if full is None else f"{full.n_trials:,} (against {full.n_enrolled:,})"
    return (
        f"{text}; a sparse trial list of {sm.n_pairs:,} pairs (EER, Cllr and ZEBRA use every "
        f"listed pair; complete trials for the 1-to-N metrics: {rows})"
    )


def condition_facts(condition: Condition) -> list[str]:
    """What a condition holds, one phrase each: embeddings, eval and dev matrices, score kind.

    Examples
    --------
    >>> from voxmetrics.data.study import Condition
    >>> sm = ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...                              trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> condition_facts(Condition("c", eval=sm, score_kind="llr"))
    ['eval: T = 2 trials × N = 2 enrolled, 0 excluded', 'scores are LLRs']
    """
    facts = []
    if condition.embeddings is not None:
        es = condition.embeddings
        facts.append(f"{len(es.meta):,} utterances, d = {es.dim}")
    facts.append(describe_matrix("eval", condition.eval))
    if condition.dev is not None:
        facts.append(describe_matrix("dev", condition.dev))
    if condition.score_kind == "distance":
        facts.append("distances negated on reading (higher = closer now)")
    elif condition.score_kind == "llr":
        facts.append("scores are LLRs")
    u = condition.utility
    if u is not None:
        shown = [
            f"{label} {value:.1%}"
            for label, value in (("WER", u.wer), ("UAR", u.uar), ("rho_F0", u.rho_f0))
            if value is not None
        ]
        if shown:
            facts.append("utility: " + ", ".join(shown) + (f" ({u.source})" if u.source else ""))
    return facts
