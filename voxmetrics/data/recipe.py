"""The attacker's recipe: how a condition's scores were made, recorded with the condition.

A privacy number holds only against the attacker that produced the scores. An
:class:`AttackerRecipe` says which one: the scoring back-end (cosine, LDA, PLDA, score
normalisation, mapping, fusion; or ``imported`` scores), what it was trained on (the
attacker's own ``train`` split, else the dev split; never eval), its parameters, and, when it
was chosen as the strongest of several, the dev figure it was chosen by, every candidate's
dev figure, and the weak-attacker findings. It is what this module is, and only that: the
back-ends themselves are :mod:`voxmetrics.embeddings.backends`, the sweep and the choice
:mod:`voxmetrics.analysis.attackers`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voxmetrics.errors import VoxMetricsInputError

__all__ = ["TRAINED_ON", "WEAK_ATTACKER", "AttackerRecipe"]

TRAINED_ON = ("none", "train", "dev", "dev (cross-fitted)")
"""What a back-end may be trained on: nothing (cosine), the ``train`` split, or the dev split
(its dev scores then cross-fitted over speaker folds, so its dev figure is out of sample)."""

WEAK_ATTACKER = "the attacker may be too weak: privacy may be overestimated"
"""The warning shown wherever a weak-attacker finding holds."""


def _scalar(value: Any, where: str) -> Any:
    """A JSON-safe scalar (None, bool, int, float, text), or the error naming it."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    try:  # numpy scalars (an array of several values has no scalar)
        item = value.item()
    except (AttributeError, ValueError):
        item = None
    if item is not None and isinstance(item, bool | int | float | str):
        return _scalar(item, where)
    raise VoxMetricsInputError(
        f"{where}: a recipe parameter must be a number, a text, true / false or null; got "
        f"{type(value).__name__}."
    )


@dataclass(frozen=True)
class AttackerRecipe:
    """How a condition's scores were made: back-end, training data, parameters, choice.

    Examples
    --------
    >>> r = AttackerRecipe("lda", trained_on="train", n_train_speakers=40,
    ...                    n_train_utterances=400, parameters={"dim": 39})
    >>> r.to_dict()["parameters"], r.label
    ({'dim': 39}, 'lda (trained on train: 400 utterances of 40 speakers)')
    >>> AttackerRecipe.from_dict(r.to_dict()) == r
    True
    """

    backend: str
    """The scoring back-end: ``cosine``, ``lda``, ``wccn``, ``plda``, ``snorm``, ``asnorm``,
    ``max``, ``procrustes``, ``fusion``, or ``imported`` (scores read from a file)."""
    trained_on: str = "none"
    """What it was trained on (:data:`TRAINED_ON`)."""
    n_train_speakers: int = 0
    """Speakers of its training data (0 when untrained)."""
    n_train_utterances: int = 0
    """Utterances of its training data (0 when untrained)."""
    parameters: tuple[tuple[str, Any], ...] | Mapping[str, Any] = ()
    """Its parameters as (name, JSON-safe scalar) pairs (a mapping is accepted and stored as
    pairs)."""
    calibrated: bool = False
    """Whether its scores were calibrated to natural-log LLRs by logistic regression on dev."""
    selected_by: str | None = None
    """The dev metric it was chosen by as the strongest (None: named, not chosen)."""
    dev_value: float | None = None
    """Its dev figure under ``selected_by`` (or its dev EER when named), None without dev."""
    candidates: tuple[tuple[str, float | None], ...] = ()
    """Every back-end tried and its dev figure (None: not applicable here), in the order
    tried, when chosen as the strongest."""
    cautions: tuple[str, ...] = field(default=())
    """Weak-attacker findings: why the attacker may be too weak (empty when none fired)."""

    def __post_init__(self) -> None:
        if not isinstance(self.backend, str) or not self.backend.strip():
            raise VoxMetricsInputError("an attacker recipe needs a back-end name.")
        if self.trained_on not in TRAINED_ON:
            raise VoxMetricsInputError(
                f"attacker recipe: trained_on '{self.trained_on}' is unknown; use one of "
                f"{', '.join(TRAINED_ON)}."
            )
        params = self.parameters
        items = params.items() if isinstance(params, Mapping) else params
        object.__setattr__(
            self,
            "parameters",
            tuple((str(k), _scalar(v, f"parameter '{k}'")) for k, v in items),
        )
        object.__setattr__(
            self,
            "candidates",
            tuple(
                (str(n), None if v is None or not math.isfinite(v) else float(v))
                for n, v in self.candidates
            ),
        )
        object.__setattr__(self, "cautions", tuple(map(str, self.cautions)))
        if self.dev_value is not None:
            v = float(self.dev_value)
            object.__setattr__(self, "dev_value", v if math.isfinite(v) else None)

    @property
    def params(self) -> dict[str, Any]:
        """:attr:`parameters` as a dictionary."""
        return dict(self.parameters)

    @property
    def weak(self) -> bool:
        """Whether a weak-attacker finding holds (:attr:`cautions` is not empty)."""
        return bool(self.cautions)

    @property
    def label(self) -> str:
        """One line for tables and messages, e.g. ``plda (trained on train: 400 ...)``."""
        if self.trained_on == "none":
            return self.backend
        return (
            f"{self.backend} (trained on {self.trained_on}: {self.n_train_utterances:,} "
            f"utterances of {self.n_train_speakers:,} speakers)"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (the report's ``attacker`` block)."""
        return {
            "backend": self.backend,
            "trained_on": self.trained_on,
            "n_train_speakers": self.n_train_speakers,
            "n_train_utterances": self.n_train_utterances,
            "parameters": self.params,
            "calibrated": self.calibrated,
            "selected_by": self.selected_by,
            "dev_value": self.dev_value,
            "candidates": [{"backend": n, "dev_value": v} for n, v in self.candidates],
            "weak": self.weak,
            "cautions": list(self.cautions),
            **({"warning": WEAK_ATTACKER} if self.weak else {}),
        }

    @classmethod
    def from_dict(
        cls, spec: Mapping[str, Any], *, where: str = "attacker recipe"
    ) -> AttackerRecipe:
        """The recipe of a :meth:`to_dict` object (as a study file stores it).

        Raises
        ------
        VoxMetricsInputError
            Not an object, or a field of the wrong kind.
        """
        if not isinstance(spec, Mapping):
            raise VoxMetricsInputError(f"{where}: must be an object, not {type(spec).__name__}.")
        try:
            params = spec.get("parameters") or {}
            if not isinstance(params, Mapping):
                raise TypeError("parameters must be an object")
            candidates = [
                (str(c["backend"]), None if c.get("dev_value") is None else float(c["dev_value"]))
                for c in spec.get("candidates") or []
            ]
            dev_value = spec.get("dev_value")
            return cls(
                backend=str(spec["backend"]),
                trained_on=str(spec.get("trained_on") or "none"),
                n_train_speakers=int(spec.get("n_train_speakers") or 0),
                n_train_utterances=int(spec.get("n_train_utterances") or 0),
                parameters=tuple(params.items()),
                calibrated=bool(spec.get("calibrated", False)),
                selected_by=None if spec.get("selected_by") is None else str(spec["selected_by"]),
                dev_value=None if dev_value is None else float(dev_value),
                candidates=tuple(candidates),
                cautions=tuple(str(c) for c in spec.get("cautions") or ()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise VoxMetricsInputError(f"{where}: malformed ({exc}).") from None
