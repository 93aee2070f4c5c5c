"""The attackers of one condition: every back-end tried, the strongest chosen on dev.

What this module is: the sweep over the attacker back-ends of
:mod:`voxmetrics.embeddings.backends` for one condition's embeddings (:func:`condition_attackers`),
each trained on the attacker's own data (the ``train`` split, else dev; never eval), scored on
dev and eval, the choice of the strongest **on dev** by a named metric (lowest dev EER by
default), calibration and fusion of scores to LLRs, the attacker recipe the chosen condition
carries, and the weak-attacker check (:mod:`voxmetrics.analysis.weak_attacker`). What it is not:
the evaluation of eval (the engine, :func:`voxmetrics.evaluation.evaluate_condition`, evaluates
the condition :meth:`AttackerSweep.condition` returns), nor the figures or the page.

**Honest dev figures.** With a ``train`` split every back-end is trained on it and scores dev and
eval out of sample. Without one it is trained on dev, and its dev scores are *cross-fitted*:
the dev speakers are split into ``folds`` groups, and the trials of each group are scored by the
back-end trained on the other groups' utterances, so a back-end never scores the speakers it
was trained on (eval is scored by the back-end trained on all of dev). Fusion weights are
cross-fitted the same way over the dev trials' speakers.

**Within folds.** A back-end trained without fold g still knows the speakers of the other
folds: its enrolled profiles of them are built from utterances it was trained on, so a trial of
fold g scores differently against them than against the held-out speakers of its own fold,
its target among them. Scored against every enrolled identity, a trained back-end would be
told apart from its target by that alone, and a fusion learns to exploit it (on speech without
any speaker information the fused dev EER came out at 0.40, its eval EER at 0.51). So while
cross-fitting, every back-end's dev figures (cosine and max too, so that all are compared on
the same pairs), the fusion weights and a calibration are learned and measured on the pairs
within folds only: each trial against the enrolled speakers held out with it
(:attr:`BackendOutcome.dev_listed`). The condition's dev scores stay complete. A fold holds
two speakers or more (fewer folds than ``folds`` when dev has fewer than twice as many
speakers), so that its pairs have non-mated ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from voxmetrics._lazy import lazy_module
from voxmetrics.data.model import EmbeddingSet, ScoreMatrix
from voxmetrics.data.recipe import AttackerRecipe
from voxmetrics.data.study import Condition
from voxmetrics.embeddings.backends import (
    BACKENDS,
    EMBEDDING_BACKENDS,
    FittedBackend,
    TrainingData,
    fit_backend,
)
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.metrics.calibration import LinearCalibration, fit_calibration, fit_fusion
from voxmetrics.metrics.cllr import min_cllr_from_pools
from voxmetrics.metrics.dcf import dcf_from_pools, tar_at_far_from_pools
from voxmetrics.metrics.eer import eer_from_pools, eer_rocch_from_pools
from voxmetrics.metrics.legal import link_rank_ties, linkability_from_ranks
from voxmetrics.metrics.parallel import single_blas_thread
from voxmetrics.metrics.pools import SortedPools
from voxmetrics.metrics.ranks import target_ranks

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported when a function first uses it

__all__ = [
    "DEFAULT_FOLDS",
    "SELECT_METRICS",
    "AttackerSweep",
    "BackendOutcome",
    "calibrated",
    "condition_attackers",
    "dev_figure",
    "parse_backend_params",
]

DEFAULT_FOLDS = 5
"""Speaker folds of the cross-fitting of dev scores when the back-ends are trained on dev."""


@dataclass(frozen=True)
class _Metric:
    stronger: str  # "lower" or "higher": which values mean a stronger attacker
    of: Callable[[ScoreMatrix], float | None]


def _pools(sm: ScoreMatrix) -> SortedPools:
    return SortedPools.of(sm)


def _linkability(sm: ScoreMatrix) -> float | None:
    """Linkability of the complete trials, else of the blocks a list is complete within.

    The blocks (the folds of a cross-fitted dev figure): each trial ranked among its block's
    enrolled identities, pooled over the trials.
    """
    full = sm.complete_rows()
    if full is not None or sm.mask is None:
        return (
            None
            if full is None
            else linkability_from_ranks(
                target_ranks(full.scores, full.targets, ties=link_rank_ties("code"))
            )
        )
    patterns, block = np.unique(sm.mask, axis=0, return_inverse=True)
    ranks = []
    for k, cols in enumerate(patterns):
        rows = (block.ravel() == k) & sm.target_listed & sm.trial_enrolled
        if cols.sum() < 2 or not rows.any():
            continue
        scores = np.asarray(sm.scores[np.ix_(rows, cols)], dtype=np.float64)
        targets = np.searchsorted(np.flatnonzero(cols), sm.targets[rows])
        ranks.append(target_ranks(scores, targets, ties=link_rank_ties("code")))
    return linkability_from_ranks(np.concatenate(ranks)) if ranks else None


SELECT_METRICS: dict[str, _Metric] = {
    "eer": _Metric("lower", lambda sm: eer_from_pools(_pools(sm)).eer),
    "eer_rocch": _Metric("lower", lambda sm: eer_rocch_from_pools(_pools(sm))),
    "min_cllr": _Metric("lower", lambda sm: min_cllr_from_pools(_pools(sm))),
    "min_dcf": _Metric(
        "lower", lambda sm: float(dcf_from_pools(_pools(sm), p_targets=(0.01,)).min_dcf[0])
    ),
    "tar_at_far": _Metric(
        "higher",
        lambda sm: float(tar_at_far_from_pools(_pools(sm), far_levels=(0.01,)).tar[0]),
    ),
    "linkability": _Metric("higher", _linkability),
}
"""The dev metrics the strongest attacker can be chosen by: ``eer`` (lowest, the default),
``eer_rocch``, ``min_cllr``, ``min_dcf`` (at P_target 0.01), ``tar_at_far`` (at FAR 1 %,
highest) and ``linkability`` (highest), each as the engine computes it."""


def dev_figure(sm: ScoreMatrix, metric: str = "eer") -> float | None:
    """``metric`` of the scores ``sm`` (:data:`SELECT_METRICS`); None when undefined.

    Examples
    --------
    >>> sm = ScoreMatrix.from_arrays([[0.9, 0.1], [0.2, 0.8]], trial_ids=["t1", "t2"],
    ...     trial_speakers=["a", "b"], enrol_speakers=["a", "b"])
    >>> dev_figure(sm), dev_figure(sm, "linkability")
    (0.0, 1.0)
    """
    if metric not in SELECT_METRICS:
        raise VoxMetricsInputError(
            f"the strongest attacker is chosen by one of {', '.join(SELECT_METRICS)}, not "
            f"'{metric}'."
        )
    value = SELECT_METRICS[metric].of(sm)
    return None if value is None or not math.isfinite(value) else float(value)


def parse_backend_params(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``NAME.PARAM=VALUE`` texts as ``{NAME: {PARAM: value}}`` (numbers and true / false read).

    Examples
    --------
    >>> parse_backend_params(["asnorm.top_n=100", "procrustes.method=ridge"])
    {'asnorm': {'top_n': 100}, 'procrustes': {'method': 'ridge'}}
    """
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        head, sep, text = item.partition("=")
        name, dot, param = head.strip().partition(".")
        if not sep or not dot or not name or not param:
            raise VoxMetricsInputError(
                f"back-end parameter '{item}': write NAME.PARAM=VALUE, e.g. asnorm.top_n=100."
            )
        value: Any = text.strip()
        if value.lower() in ("true", "false"):
            value = value.lower() == "true"
        else:
            for kind in (int, float):
                try:
                    value = kind(value)
                    break
                except ValueError:
                    continue
        out.setdefault(name, {})[param.strip()] = value
    return out


@dataclass(frozen=True, eq=False)
class BackendOutcome:
    """One back-end of the sweep: its dev and eval scores and dev figures, or why it was skipped."""

    name: str
    """The back-end."""
    eval: ScoreMatrix | None = None
    """Its scores of the evaluated split."""
    dev: ScoreMatrix | None = None
    """Its out-of-sample dev scores (held out, or cross-fitted), None without a dev split."""
    dev_eer: float | None = None
    """Its dev EER."""
    dev_value: float | None = None
    """Its dev figure under the sweep's metric."""
    recipe: AttackerRecipe | None = None
    """How it was made (no choice information: see :meth:`AttackerSweep.recipe`)."""
    skipped: str | None = None
    """Why it could not be tried here (None when it was)."""
    scorer: Any = field(default=None, repr=False)
    """The back-end fitted on all of the training data (scores any split, e.g. original speech)."""
    score_kind: str = "similarity"
    """``llr`` for fused or calibrated scores, else ``similarity``."""
    dev_listed: NDArray[np.bool_] | None = field(default=None, repr=False)
    """The dev pairs its dev figures are measured on (T x N): with cross-fitting, those whose
    trial and enrolled speaker were held out of the same fold (module docstring); None: every
    pair."""

    @property
    def dev_pairs(self) -> ScoreMatrix | None:
        """Its dev scores restricted to :attr:`dev_listed` (the matrix its dev figures are of)."""
        return None if self.dev is None else _listed(self.dev, self.dev_listed)

    @property
    def ok(self) -> bool:
        """Whether it was tried (has eval scores)."""
        return self.eval is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (no scores)."""
        return {
            "backend": self.name,
            "dev_eer": self.dev_eer,
            "dev_value": self.dev_value,
            "skipped": self.skipped,
            "recipe": None if self.recipe is None else self.recipe.to_dict(),
        }


@dataclass(frozen=True, eq=False)
class AttackerSweep:
    """Every back-end tried on one condition, and the one chosen (the strongest on dev)."""

    outcomes: tuple[BackendOutcome, ...]
    """The back-ends in the order tried."""
    chosen: str
    """The back-end reported: the strongest on dev, or the only one asked for."""
    select_by: str | None
    """The dev metric it was chosen by (None: it was named, not chosen)."""
    trained_on: str
    """``train``, ``dev (cross-fitted)`` or ``none`` (no trained back-end tried)."""
    cosine_dev_eer: float | None = None
    """Today's attacker's (cosine) dev EER, for the weak-attacker check (None without dev)."""

    def outcome(self, name: str) -> BackendOutcome:
        """The outcome of back-end ``name``."""
        for o in self.outcomes:
            if o.name == name:
                return o
        raise VoxMetricsInputError(
            f"back-end '{name}' was not tried; it tried {', '.join(o.name for o in self.outcomes)}."
        )

    @property
    def strongest(self) -> BackendOutcome:
        """The chosen back-end's outcome."""
        return self.outcome(self.chosen)

    def recipe(self, name: str | None = None, *, cautions: Sequence[str] = ()) -> AttackerRecipe:
        """The recipe of ``name`` (default: the chosen one, with how it was chosen)."""
        o = self.outcome(name or self.chosen)
        if o.recipe is None:
            raise VoxMetricsInputError(f"back-end '{o.name}' was skipped: {o.skipped}")
        recipe = replace(o.recipe, cautions=tuple(cautions))
        if o.name != self.chosen or self.select_by is None:
            return recipe
        return replace(
            recipe,
            selected_by=self.select_by,
            dev_value=o.dev_value,
            candidates=tuple((c.name, c.dev_value) for c in self.outcomes),
        )

    def condition(
        self,
        name: str,
        *,
        backend: str | None = None,
        attacker: str = "semi-informed",
        embeddings: EmbeddingSet | None = None,
        description: str = "",
        cautions: Sequence[str] = (),
    ) -> Condition:
        """The condition of back-end ``backend`` (default the chosen one) with its recipe."""
        o = self.outcome(backend or self.chosen)
        if o.eval is None:
            raise VoxMetricsInputError(f"back-end '{o.name}' was skipped: {o.skipped}")
        return Condition(
            name,
            eval=o.eval,
            dev=o.dev,
            attacker=attacker,  # type: ignore[arg-type]
            embeddings=embeddings,
            description=description,
            score_kind=o.score_kind,  # type: ignore[arg-type]
            recipe=self.recipe(o.name, cautions=cautions),
        )

    def frame(self) -> pd.DataFrame:
        """One row per back-end: its dev EER, dev figure, whether chosen, why skipped."""
        return pd.DataFrame(
            [
                {
                    "Back-end": o.name,
                    "Dev EER": o.dev_eer,
                    f"Dev {self.select_by or 'eer'}": o.dev_value,
                    "Chosen": o.name == self.chosen,
                    "Skipped": o.skipped or "",
                }
                for o in self.outcomes
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the choice and every back-end's figures."""
        return {
            "chosen": self.chosen,
            "select_by": self.select_by,
            "trained_on": self.trained_on,
            "cosine_dev_eer": self.cosine_dev_eer,
            "backends": [o.to_dict() for o in self.outcomes],
        }


def _folds(speakers: NDArray[np.str_], k: int, seed: int) -> list[NDArray[np.str_]]:
    """The unique ``speakers`` split into ``k`` groups at random (seeded).

    At most half as many groups as speakers, so that each holds two speakers or more: the
    pairs within a fold then have non-mated pairs (module docstring).
    """
    names = np.unique(speakers)
    k = min(k, max(1, names.size // 2))
    order = np.random.default_rng(seed).permutation(names.size)
    return [np.sort(names[order[f::k]]) for f in range(k)]


def _fold_pairs(dev: ScoreMatrix, groups: Sequence[NDArray[np.str_]]) -> NDArray[np.bool_] | None:
    """The dev pairs within folds: trial and enrolled speaker held out of the same fold.

    None when no pair is (the dev speakers are not the training speakers: no fold holds them).
    """
    fold = {str(spk): k for k, g in enumerate(groups) for spk in g}
    t = np.array([fold.get(str(x), -1) for x in dev.trial_speakers])
    e = np.array([fold.get(str(x), -2) for x in dev.enrol_speakers])
    pairs = t[:, None] == e[None, :]
    if dev.mask is not None:
        pairs &= dev.mask
    return pairs if pairs.any(axis=1).all() else None


def _listed(sm: ScoreMatrix, listed: NDArray[np.bool_] | None) -> ScoreMatrix:
    """``sm`` restricted to the pairs ``listed`` (itself when None)."""
    if listed is None:
        return sm
    return ScoreMatrix.from_arrays(
        sm.scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        attributes=dict(sm.attributes),
        source=sm.source,
        n_excluded_trials=sm.n_excluded_trials,
        mask=listed,
    )


def _cross_fitted_dev(
    es: EmbeddingSet,
    fit: Callable[[TrainingData], FittedBackend],
    data: TrainingData,
    folds: int,
    seed: int,
) -> ScoreMatrix:
    """Dev scores where each trial is scored by the back-end trained without its speaker."""
    _, trial = es.roles("dev")
    trial_spk = es.meta["speaker"].to_numpy().astype(str)[trial]
    groups = _folds(data.speakers, folds, seed)
    fitted = [fit(data.subset(~np.isin(data.speakers, g))) for g in groups]

    def scorer(enrol, enrol_speakers, trials):
        names = np.unique(enrol_speakers)
        out = np.zeros((trials.shape[0], names.size))
        for group, backend in zip(groups, fitted, strict=True):
            rows = np.isin(trial_spk, group)
            if rows.any():
                names, out[rows] = backend(enrol, enrol_speakers, trials[rows])
        return names, out

    return es.score_matrix_with("dev", scorer)


def _recipe(
    name: str, data: TrainingData | None, params: Mapping[str, Any], *, calibrated: bool = False
) -> AttackerRecipe:
    trained = name not in ("cosine", "max") and data is not None
    return AttackerRecipe(
        name,
        trained_on=(
            "none" if not trained else "train" if data.split == "train" else "dev (cross-fitted)"  # type: ignore[union-attr]
        ),
        n_train_speakers=data.n_speakers if trained else 0,  # type: ignore[union-attr]
        n_train_utterances=data.n_utterances if trained else 0,  # type: ignore[union-attr]
        parameters=dict(params),
        calibrated=calibrated,
    )


def _embedding_outcome(
    name: str,
    es: EmbeddingSet,
    split: str,
    data: TrainingData | None,
    params: Mapping[str, Any],
    folds: int,
    seed: int,
    select_by: str,
    listed: NDArray[np.bool_] | None = None,
) -> BackendOutcome:
    """One embedding back-end trained, scored on dev (out of sample) and on ``split``.

    Its dev figures are of the dev pairs ``listed`` (the pairs within folds while
    cross-fitting, module docstring; None: every pair).
    """
    has_dev = "dev" in es.splits()
    if name == "cosine":  # today's scoring, bit for bit
        fitted: FittedBackend = fit_backend("cosine")
        ev = es.score_matrix(split)  # type: ignore[arg-type]
        dev = es.score_matrix("dev") if has_dev else None
    else:
        fitted = fit_backend(name, data, **params)
        ev = es.score_matrix_with(split, fitted)  # type: ignore[arg-type]
        dev = None
        if has_dev and (data is None or data.split != "dev" or name == "max"):
            dev = es.score_matrix_with("dev", fitted)
        elif has_dev and data is not None:
            dev = _cross_fitted_dev(es, lambda d: fit_backend(name, d, **params), data, folds, seed)
    pairs = None if dev is None else _listed(dev, listed)
    return BackendOutcome(
        name,
        eval=ev,
        dev=dev,
        dev_eer=None if pairs is None else dev_figure(pairs, "eer"),
        dev_value=None if pairs is None else dev_figure(pairs, select_by),
        recipe=_recipe(name, data, fitted.parameters),
        scorer=fitted,
        dev_listed=None if dev is None else listed,
    )


def _pools_of_rows(
    matrices: Sequence[ScoreMatrix], rows: NDArray[np.bool_]
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """Each matrix's listed target and non-target scores of the trials ``rows``.

    The matrices share one layout (the same trials and enrolled identities), so the pools are
    aligned across them: the k-th target of one is the k-th target of every other.
    """
    first = matrices[0]
    t = np.flatnonzero(rows)
    cols = first.targets[t]
    at = np.arange(t.size)
    listed = (
        np.ones((t.size, first.n_enrolled), dtype=bool) if first.mask is None else first.mask[t]
    )
    mated = np.zeros_like(listed)
    mated[at, cols] = True
    tar_keep = listed[at, cols] & first.trial_enrolled[t]
    non_keep = listed & ~mated
    tars = [sm.scores[t, cols][tar_keep].astype(np.float64) for sm in matrices]
    nons = [sm.scores[t][non_keep].astype(np.float64) for sm in matrices]
    return tars, nons


def _with_scores(sm: ScoreMatrix, scores: NDArray[np.float64]) -> ScoreMatrix:
    return ScoreMatrix.from_arrays(
        scores,
        trial_ids=sm.trial_ids,
        trial_speakers=sm.trial_speakers,
        enrol_speakers=sm.enrol_speakers,
        attributes=dict(sm.attributes),
        source=sm.source,
        n_excluded_trials=sm.n_excluded_trials,
        mask=sm.mask,
    )


class _FusedScorer(FittedBackend):
    """The fusion of fitted back-ends' scores (to score another split, e.g. original speech)."""

    name = "fusion"

    def __init__(self, parts: Sequence[FittedBackend], fusion: LinearCalibration) -> None:
        super().__init__(fusion.to_dict())
        self.parts, self.fusion = list(parts), fusion

    def __call__(self, enrol, enrol_speakers, trials):
        scored = [b(enrol, enrol_speakers, trials) for b in self.parts]
        return scored[0][0], self.fusion.apply(*(s for _, s in scored))


def _fusion_outcome(
    parts: Sequence[BackendOutcome], folds: int, seed: int, select_by: str
) -> BackendOutcome:
    """The linear logistic-regression fusion of ``parts`` (weights learned on dev)."""
    if len(parts) < 2 or any(p.dev is None for p in parts):
        return BackendOutcome(
            "fusion", skipped="fusion needs at least two back-ends with dev scores to weigh"
        )
    listed = parts[0].dev_listed  # every part's dev figures are of the same pairs
    devs = [p.dev_pairs for p in parts]  # the weights are learned on those pairs
    evals = [p.eval for p in parts]
    every = np.ones(devs[0].n_trials, dtype=bool)  # type: ignore[union-attr]
    fusion = fit_fusion(*_pools_of_rows(devs, every), seed=seed)  # type: ignore[arg-type]
    # dev figure: weights learned without the speakers of the trials they fuse
    fused_dev = np.empty(devs[0].shape)  # type: ignore[union-attr]
    speakers = devs[0].trial_speakers  # type: ignore[union-attr]
    for group in _folds(speakers, folds, seed):
        rows = np.isin(speakers, group)
        weights = fit_fusion(*_pools_of_rows(devs, ~rows), seed=seed)  # type: ignore[arg-type]
        fused_dev[rows] = weights.apply(*(p.dev.scores[rows] for p in parts))  # type: ignore[union-attr]
    dev = _with_scores(parts[0].dev, fused_dev)  # type: ignore[arg-type]
    ev = _with_scores(evals[0], fusion.apply(*(e.scores for e in evals)))  # type: ignore[union-attr,arg-type]
    trained = [p.recipe for p in parts if p.recipe is not None and p.recipe.trained_on != "none"]
    first = trained[0] if trained else parts[0].recipe
    recipe = AttackerRecipe(
        "fusion",
        trained_on=first.trained_on if first else "none",
        n_train_speakers=first.n_train_speakers if first else 0,
        n_train_utterances=first.n_train_utterances if first else 0,
        parameters={
            "components": ",".join(p.name for p in parts),
            "weights": ",".join(f"{w:.6g}" for w in fusion.weights),
            "offset": fusion.offset,
            "weights_trained_on": "dev (cross-fitted for the dev figure)",
        },
        calibrated=True,
    )
    pairs = _listed(dev, listed)
    return BackendOutcome(
        "fusion",
        eval=ev,
        dev=dev,
        dev_eer=dev_figure(pairs, "eer"),
        dev_value=dev_figure(pairs, select_by),
        recipe=recipe,
        scorer=_FusedScorer([p.scorer for p in parts], fusion),
        score_kind="llr",
        dev_listed=listed,
    )


def calibrated(outcome: BackendOutcome, *, seed: int = 0) -> BackendOutcome:
    """``outcome`` with its scores calibrated to LLRs by logistic regression on its dev scores.

    Raises
    ------
    VoxMetricsInputError
        Without dev scores (calibration is learned on dev and applied to eval).
    """
    if outcome.score_kind == "llr":  # fusion: LLRs already
        return outcome
    if outcome.dev is None or outcome.eval is None or outcome.recipe is None:
        raise VoxMetricsInputError(
            f"calibrating the {outcome.name} scores needs dev scores (it is learned on dev and "
            "applied to eval); give a dev split."
        )
    pairs = outcome.dev_pairs  # within folds while cross-fitting
    tars, nons = _pools_of_rows([pairs], np.ones(outcome.dev.n_trials, dtype=bool))  # type: ignore[list-item]
    cal = fit_calibration(tars[0], nons[0], seed=seed)
    params = {**outcome.recipe.params, "calibration_weight": cal.weights[0]}
    params["calibration_offset"] = cal.offset
    return replace(
        outcome,
        eval=_with_scores(outcome.eval, cal.apply(outcome.eval.scores)),
        dev=_with_scores(outcome.dev, cal.apply(outcome.dev.scores)),
        recipe=replace(outcome.recipe, parameters=tuple(params.items()), calibrated=True),
        score_kind="llr",
    )


def _check_training(es: EmbeddingSet, split: str, data: TrainingData | None) -> None:
    """The training speakers are none of the evaluated split's."""
    if data is None or data.split == split:
        if data is not None:
            raise VoxMetricsInputError(
                f"a back-end trained on the {split} split cannot be reported on it; evaluate "
                "eval and train on a 'train' (or 'dev') split."
            )
        return
    evaluated = es.meta["speaker"].to_numpy().astype(str)[(es.meta["split"] == split).to_numpy()]
    shared = np.intersect1d(np.unique(data.speakers), evaluated)
    if shared.size:
        raise VoxMetricsInputError(
            f"the attacker's {data.split} split shares {shared.size} speaker(s) with {split} "
            f"(e.g. '{shared[0]}'); it must be other speakers, or the back-end learns the "
            "evaluated ones."
        )


@single_blas_thread()
def condition_attackers(
    es: EmbeddingSet,
    *,
    backends: Sequence[str] = BACKENDS,
    select_by: str = "eer",
    split: str = "eval",
    training: EmbeddingSet | None = None,
    originals: EmbeddingSet | None = None,
    calibrate: bool = False,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
) -> AttackerSweep:
    """Try the back-ends on one condition's embeddings and choose the strongest on dev.

    Parameters
    ----------
    es : EmbeddingSet
        The condition's embeddings (its ``dev`` and ``split`` are scored).
    backends : sequence of str
        The back-ends to try (:data:`~voxmetrics.embeddings.backends.BACKENDS`, default all);
        one name reports that one (no choice); several report the strongest on dev.
    select_by : str
        The dev metric of the choice (:data:`SELECT_METRICS`; default ``eer``).
    split : str
        The evaluated split (``eval``); never trained on.
    training : EmbeddingSet, optional
        Where the attacker's training data come from (default ``es``): its ``train`` split,
        else its dev split.
    originals : EmbeddingSet, optional
        Original embeddings of the training utterances (matched on ``utt_id``), for the
        mapping attack; without them ``procrustes`` is skipped.
    calibrate : bool
        Calibrate the chosen back-end's scores to LLRs (logistic regression on its dev scores).
    params : mapping, optional
        Per back-end parameters, ``{"asnorm": {"top_n": 100}}``.
    folds, seed : int
        Speaker folds of the cross-fitting (training on dev) and their seed.
    progress : callable, optional
        ``progress(fraction, message)``, called before each back-end is tried (the
        dashboard's progress bar).

    Returns
    -------
    AttackerSweep

    Notes
    -----
    BLAS runs on one thread meanwhile (as in the engine): the last bits of the products do
    not depend on the machine, and a shared machine wastes no CPU on spinning BLAS threads.

    Raises
    ------
    VoxMetricsInputError
        Unknown back-end or metric; choosing without a dev split; a named back-end that cannot
        be trained here; training data that share speakers with the evaluated split.
    """
    names = list(dict.fromkeys(backends))
    unknown = [b for b in names if b not in BACKENDS]
    if unknown or not names:
        raise VoxMetricsInputError(
            f"back-end '{unknown[0] if unknown else ''}' is unknown; use any of "
            f"{', '.join(BACKENDS)} (or 'strongest': every one, chosen on dev)."
        )
    if select_by not in SELECT_METRICS:
        raise VoxMetricsInputError(
            f"the strongest attacker is chosen by one of {', '.join(SELECT_METRICS)}, not "
            f"'{select_by}'."
        )
    choose = len(names) > 1
    if choose and "dev" not in es.splits():
        raise VoxMetricsInputError(
            f"{es.source or 'embeddings'}: choosing the strongest attacker needs a dev split "
            "(it is chosen on dev and reported on eval); add one, or name one back-end."
        )
    source = training if training is not None else es
    needs_training = any(b not in ("cosine", "max") for b in names)
    data = None
    if needs_training and source.training_split() is not None:
        data = TrainingData.of(source, originals=originals)
    _check_training(es, split, data)
    params = params or {}
    listed = None  # cross-fitting: every dev figure of the pairs within folds
    if data is not None and data.split == "dev" and "dev" in es.splits():
        listed = _fold_pairs(es.score_matrix("dev"), _folds(data.speakers, folds, seed))
    outcomes: list[BackendOutcome] = []
    # fusion named alone fuses every embedding back-end that can be trained here
    components = list(EMBEDDING_BACKENDS) if names == ["fusion"] else names
    for k, name in enumerate(components):
        if name == "fusion":
            continue
        if progress is not None:
            progress(k / len(components), f"trying {name}")
        try:
            outcomes.append(
                _embedding_outcome(
                    name, es, split, data, params.get(name, {}), folds, seed, select_by, listed
                )
            )
        except (ValueError, np.linalg.LinAlgError) as exc:  # input errors are ValueErrors
            if not choose and name in names:
                if isinstance(exc, VoxMetricsInputError):
                    raise
                raise VoxMetricsInputError(
                    f"back-end '{name}' could not be fitted: {exc}"
                ) from None
            outcomes.append(BackendOutcome(name, skipped=str(exc)))
    if "fusion" in names:
        if progress is not None:
            progress((len(components) - 1) / len(components), "fusing the back-ends")
        try:
            fused = _fusion_outcome([o for o in outcomes if o.ok], folds, seed, select_by)
        except (ValueError, np.linalg.LinAlgError) as exc:  # e.g. too few dev pairs to weigh
            fused = BackendOutcome("fusion", skipped=str(exc).rstrip("."))
        if not choose and not fused.ok:
            raise VoxMetricsInputError(f"fusion: {fused.skipped}.")
        outcomes.insert(components.index("fusion") if "fusion" in components else 0, fused)
    chosen = names[0] if not choose else _strongest(outcomes, select_by)
    cosine = next((o for o in outcomes if o.name == "cosine"), None)
    cosine_dev = cosine.dev_eer if cosine is not None else None
    if cosine is None and "dev" in es.splits():
        cosine_dev = dev_figure(_listed(es.score_matrix("dev"), listed), "eer")
    if calibrate:
        outcomes = [calibrated(o, seed=seed) if o.name == chosen else o for o in outcomes]
    trained = data is not None and any(o.ok and o.name not in ("cosine", "max") for o in outcomes)
    return AttackerSweep(
        outcomes=tuple(outcomes),
        chosen=chosen,
        select_by=select_by if choose else None,
        trained_on=(
            "none" if not trained else "train" if data.split == "train" else "dev (cross-fitted)"  # type: ignore[union-attr]
        ),
        cosine_dev_eer=cosine_dev,
    )


def _strongest(outcomes: Sequence[BackendOutcome], select_by: str) -> str:
    """The first back-end with the best dev figure (lowest, or highest for linkability, TAR)."""
    tried = [o for o in outcomes if o.dev_value is not None]
    if not tried:
        reasons = "; ".join(f"{o.name}: {o.skipped}" for o in outcomes if o.skipped)
        raise VoxMetricsInputError(
            f"no back-end could be scored on dev, so none can be chosen ({reasons or 'no dev'})."
        )
    sign = -1.0 if SELECT_METRICS[select_by].stronger == "higher" else 1.0
    best = min(sign * o.dev_value for o in tried)  # type: ignore[operator]
    return next(o.name for o in tried if sign * o.dev_value == best)  # type: ignore[operator]
