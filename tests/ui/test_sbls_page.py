"""The Soft biometrics page's helpers (voxmetrics.ui.sbls_page): sizes, notes, switch text."""

from __future__ import annotations

import dataclasses

import pandas as pd

from voxmetrics.data.study import Study
from voxmetrics.synth import demo_study
from voxmetrics.ui.sbls_page import (
    AUTO_IDENTITY_SPEAKERS,
    group_size_note,
    identity_off,
    trial_speakers,
)


def test_trial_speakers_is_the_most_of_the_named_conditions():
    demo = demo_study(n_speakers=6)
    plain = demo.get("plain")
    fewer = plain.eval.subset_trials(plain.eval.trial_speakers != plain.eval.trial_speakers[0])
    study = Study((plain, dataclasses.replace(plain, name="fewer", eval=fewer)))
    assert trial_speakers(study, ["plain", "fewer"]) == 6
    assert trial_speakers(study, ["fewer"]) == 5
    assert trial_speakers(study, []) == 0


def test_identity_off_says_how_many_and_how_to_turn_them_on():
    text = identity_off(1234, 3)
    assert "1,234 trial speakers" in text and "each of the 3 condition(s)" in text
    assert "Turn the switch on" in text
    assert AUTO_IDENTITY_SPEAKERS == 200  # the documented threshold of the switch


def test_group_size_note_names_the_smallest_subgroup_and_the_groups_used():
    groups = pd.DataFrame(
        {
            "Subgroup": ["sex=F & age_group=18-35", "sex=M & age_group=36-60", "sex=M & x=y"],
            "Utterances": [40, 7, 12],
            "Speakers": [5, 2, 3],
            "Used": [True, False, True],
        }
    )
    note = group_size_note("anon_1", groups, min_group_size=10)
    assert note.startswith(r"**Minimum group size.** The smallest subgroup of anon\_1, M · 36\-60,")
    assert "has 7 eval utterances from 2 speakers" in note
    assert "a minimum of up to 7 keeps all 3 subgroups (now 10: 2 of 3 used)" in note
