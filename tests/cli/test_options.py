"""The option groups several commands share (voxmetrics/cli/_options.py), each written once.

How each command reads them is tested in that command's file of tests/cli/; here: their
values, defaults (a study command's default to the study file's: None) and refusals.
"""

from __future__ import annotations

import argparse
from dataclasses import fields

import pytest

from voxmetrics.cli import _options as opts
from voxmetrics.cli import main
from voxmetrics.limits import Limits


def _parser(*adders) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="x")
    for add in adders:
        add(p)
    return p


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("7", 7), ("123456789", 123456789)])
def test_seed_takes_whole_numbers_from_0(text, value):
    assert opts.seed(text) == value


@pytest.mark.parametrize("text", ["-1", "1.5", "seven", ""])
def test_seed_refuses_what_numpy_would_and_says_how_to_fix(text):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        opts.seed(text)
    assert str(caught.value) == f"'{text}': give a whole number >= 0, e.g. --seed 0"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("300MB", "300MB"),
        ("2GiB", "2GiB"),
        (" auto ", "auto"),
        ("AUTO", "AUTO"),
        ("0.5", "0.5"),
        ("4k", "4k"),
        ("1e9", "1e9"),
        ("512 b", "512 b"),
        ("1TB", "1TB"),
    ],
)
def test_memory_size_takes_sizes_fractions_and_auto(text, kept):
    assert opts.memory_size(text) == kept


@pytest.mark.parametrize("text", ["lots", "-1GB", "", "1 GB of RAM", "GB", "1.5.2"])
def test_memory_size_refuses_the_rest(text):
    with pytest.raises(argparse.ArgumentTypeError, match="give a size such as 300MB or 2GiB"):
        opts.memory_size(text)


def test_limit_option_is_one_shared_parent_repeatable_and_absent_unless_given():
    assert opts.limit_option() is opts.limit_option()
    p = argparse.ArgumentParser(parents=[opts.limit_option()])
    args = p.parse_args(["--limit", "max_rows=10", "--limit", "max_cells=1e6"])
    assert args.limit == ["max_rows=10", "max_cells=1e6"]
    assert not hasattr(p.parse_args([]), "limit")  # SUPPRESS: the environment's apply
    help_text = opts.limit_option()._actions[0].help
    assert all(f.name in help_text for f in fields(Limits))


def test_the_defaults_of_a_command_and_of_a_study_command():
    def adders(study):
        return (
            lambda p: opts.add_bootstrap_seed(p, "replicates", "the bootstrap", study=study),
            lambda p: opts.add_ties(p, study=study),
            lambda p: opts.add_linkability_rule(p, study=study),
            lambda p: opts.add_lid_variant(p, study=study),
        )

    plain = vars(_parser(*adders(False)).parse_args([]))
    assert plain == {
        "bootstrap": 0,
        "seed": 0,
        "ties": "reference",
        "linkability_rule": "code",
        "lid_variant": "reference-code",
    }
    of_study = vars(_parser(*adders(True)).parse_args([]))
    assert of_study == dict.fromkeys(plain)  # None: the study file's setting
    p = _parser(*adders(True))
    help_text = p.format_help()
    assert "(default: the study's)" in help_text and "default: the study's setting" in help_text
    given = p.parse_args(
        [
            "--bootstrap",
            "9",
            "--seed",
            "3",
            "--ties",
            "attacker",
            "--linkability-rule",
            "strict",
            "--lid-variant",
            "maximum-likelihood",
        ]
    )
    assert (given.bootstrap, given.seed, given.ties) == (9, 3, "attacker")
    assert (given.linkability_rule, given.lid_variant) == ("strict", "maximum-likelihood")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ties", "mean"], "invalid choice: 'mean'"),
        (["--linkability-rule", "loose"], "invalid choice: 'loose'"),
        (["--lid-variant", "exact"], "invalid choice: 'exact'"),
        (["--seed", "-2"], "'-2': give a whole number >= 0"),
        (["--memory-limit", "lots"], "'lots': give a size such as 300MB"),
    ],
)
def test_bad_values_are_refused_by_the_parser(argv, message, capsys):
    p = _parser(
        lambda p: opts.add_seed(p, "x"),
        opts.add_ties,
        opts.add_linkability_rule,
        opts.add_lid_variant,
        lambda p: opts.add_dask_options(p, "the scheduler"),
    )
    with pytest.raises(SystemExit) as caught:
        p.parse_args(argv)
    assert caught.value.code == 2 and message in capsys.readouterr().err


def test_deprecated_lid_variant_name_is_still_a_choice():
    assert opts.LID_VARIANTS == ["reference-code", "maximum-likelihood", "metrics"]
    assert _parser(opts.add_lid_variant).parse_args(["--lid-variant", "metrics"]).lid_variant == (
        "metrics"
    )


def test_split_json_html_and_dask_options():
    p = _parser(
        lambda p: opts.add_split(p, "which split"),
        opts.add_json,
        lambda p: opts.add_html(p, "the report"),
        lambda p: opts.add_dask_options(p, "a Dask scheduler"),
    )
    assert vars(p.parse_args([])) == {
        "split": "eval",
        "json": None,
        "html": None,
        "scheduler": None,
        "workers": 2,
        "memory_limit": None,
    }
    args = p.parse_args(["--split", "dev", "--json", "o.json", "--memory-limit", " 2GiB"])
    assert (args.split, args.json, args.memory_limit) == ("dev", "o.json", "2GiB")
    assert "also write the JSON object to this file" in p.format_help()


def test_embedding_options_with_and_without_the_original():
    both = _parser(lambda p: opts.add_embedding_options(p, "--anonymised", original=True))
    assert vars(both.parse_args([])) == {"system": None, "original_system": None, "ark_root": None}
    assert "utterances of --anonymised whose" in both.format_help()
    one = _parser(lambda p: opts.add_embedding_options(p, "--embeddings"))
    assert vars(one.parse_args([])) == {"system": None, "ark_root": None}


def test_a_command_shows_a_refused_seed_as_a_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["evaluate", "scores.csv", "--seed", "-1"])
    assert caught.value.code == 2
    assert "argument --seed: '-1': give a whole number >= 0" in capsys.readouterr().err
