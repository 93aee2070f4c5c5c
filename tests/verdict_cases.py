"""A VoicePrivacy-shaped study of two systems under three attackers, for the verdict tests.

``two_system_study()``: the original speech (attacker ``original``) and two anonymisers,
``alpha`` and ``beta``, each under the ignorant, lazy-informed and semi-informed attackers,
named as the VoicePrivacy tree names them (``alpha (semi-informed)``). The score matrices and
embeddings are the demo's (``alpha`` takes the mild anonymiser's under every attacker but the
semi-informed one, which takes the leaky one's; ``beta`` the strong and random ones), so every
condition has a dev set and embeddings; the utility is set by hand, ``alpha``'s WER with
bootstrap replicates of its own speakers.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from voxmetrics.data.study import Condition, Study, StudySettings
from voxmetrics.data.utility import Utility
from voxmetrics.metrics.bootstrap import draws_key
from voxmetrics.synth import demo_study

ATTACKERS = ("ignorant", "lazy-informed", "semi-informed")
SOURCES = {
    "alpha": {"ignorant": "anon-mild", "lazy-informed": "anon-mild", "semi-informed": "anon-leaky"},
    "beta": {"ignorant": "anon-strong", "lazy-informed": "random", "semi-informed": "random"},
}
WER = {"alpha": 0.04, "beta": 0.09}
UAR = {"alpha": 0.61, "beta": 0.55}


def _utility(system: str, n_boot: int) -> Utility:
    if system != "alpha":
        return Utility(wer=WER[system], uar=UAR[system], source="set by hand")
    rng = np.random.default_rng(7)
    reps = WER[system] + 0.004 * rng.standard_normal(n_boot)
    lo, hi = (float(x) for x in np.quantile(reps, [0.025, 0.975]))
    return Utility(
        wer=WER[system],
        uar=UAR[system],
        intervals={"wer": (lo, hi)},
        replicates={"wer": reps},
        draws={"wer": draws_key([f"ls-{k}" for k in range(20)], n_boot=n_boot, seed=0)},
        source="set by hand, WER with replicates",
    )


@functools.cache
def two_system_study(n_speakers: int = 10, bootstrap: int = 50) -> Study:
    """The study (module docstring), with ``bootstrap`` replicates in its settings."""
    demo = demo_study(n_speakers=n_speakers)
    plain = demo.get("plain")
    conditions = [
        dataclasses.replace(
            plain, name="original", attacker="original", utility=Utility(wer=0.018, uar=0.70)
        )
    ]
    for system, by_attacker in SOURCES.items():
        for attacker in ATTACKERS:
            source = demo.get(by_attacker[attacker])
            conditions.append(
                Condition(
                    f"{system} ({attacker})",
                    eval=source.eval,
                    dev=source.dev,
                    attacker=attacker,
                    embeddings=source.embeddings,
                    utility=_utility(system, bootstrap),
                )
            )
    return Study(tuple(conditions), name="two systems", settings=StudySettings(bootstrap=bootstrap))
