"""The dashboard's server settings (voxmetrics/dashboard.py), shared by the CLI and the pages.

How ``voxmetrics app`` fills them is tested in ``tests/cli/test_app.py``, how the pages honour
them in ``tests/ui/test_access.py``; here: the settings themselves and their JSON hand-over.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
from pathlib import Path

import pytest

from voxmetrics import dashboard
from voxmetrics.dashboard import SETTINGS_ENV, DashboardSettings, is_loopback, token_digest

FULL = DashboardSettings(
    host="0.0.0.0",
    login="oidc",
    token_sha256="ab" * 32,
    oidc_provider="lab",
    allowed=("ana@lab.org", "@lab.org"),
    models=(("team", "/srv/models/a"), ("mine", "/srv/models/b")),
    study="/srv/studies/s.vxm",
)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.10.20.30", True),  # the whole 127/8 block
        ("::1", True),
        ("[::1]", True),  # as written in a URL
        ("localhost", True),
        (" LocalHost ", True),
        ("0.0.0.0", False),  # every interface
        ("::", False),
        ("", False),
        ("192.168.1.20", False),
        ("localhost.example.org", False),  # a host name: not trusted to be this machine
        ("not an address", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_token_digest_is_the_sha256_of_the_utf8_token():
    # FIPS 180-2 test vector: sha256("abc")
    assert token_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert token_digest("é") != token_digest("e") and len(token_digest("")) == 64


def test_the_defaults_are_this_machine_without_login():
    s = DashboardSettings()
    assert (s.host, s.login, s.token_sha256, s.oidc_provider) == ("127.0.0.1", None, "", None)
    assert (s.allowed, s.models, s.study) == ((), (), None)
    assert not s.exposed
    assert DashboardSettings(host="10.0.0.5").exposed
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.host = "0.0.0.0"  # type: ignore[misc]


def test_json_round_trip_keeps_every_field_and_its_tuples():
    text = FULL.to_json()
    assert set(json.loads(text)) == {f.name for f in dataclasses.fields(DashboardSettings)}
    back = DashboardSettings.from_json(text)
    assert back == FULL
    assert isinstance(back.allowed, tuple) and isinstance(back.models[0], tuple)
    assert DashboardSettings.from_json(DashboardSettings().to_json()) == DashboardSettings()


def test_from_json_fills_missing_fields_with_the_defaults():
    assert DashboardSettings.from_json("{}") == DashboardSettings()
    s = DashboardSettings.from_json('{"host": "::", "models": [["a", "/m"]]}')
    assert s == DashboardSettings(host="::", models=(("a", "/m"),))


def test_from_env_reads_the_variable_and_defaults_without_it(monkeypatch):
    assert SETTINGS_ENV == "VOXMETRICS_APP_SETTINGS"
    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    assert DashboardSettings.from_env() == DashboardSettings()
    monkeypatch.setenv(SETTINGS_ENV, "")  # set but empty: started otherwise
    assert DashboardSettings.from_env() == DashboardSettings()
    monkeypatch.setenv(SETTINGS_ENV, FULL.to_json())
    assert DashboardSettings.from_env() == FULL


def test_the_module_uses_the_standard_library_only():
    tree = ast.parse(Path(dashboard.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}
