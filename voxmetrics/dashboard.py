"""The dashboard's server settings: what ``voxmetrics app`` hands to the pages.

Both shells need them: the command line (:mod:`voxmetrics.cli.app`) builds
:class:`DashboardSettings` from its options and writes them as JSON into the environment
variable :data:`SETTINGS_ENV`; the dashboard (:mod:`voxmetrics.ui.access`) reads them back
before a page shows anything. They live here, below both, so that neither shell imports the
other. Standard library only: no Streamlit, nothing of the engine.
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import json
import os
from dataclasses import dataclass

__all__ = ["SETTINGS_ENV", "DashboardSettings", "is_loopback", "token_digest"]

SETTINGS_ENV = "VOXMETRICS_APP_SETTINGS"
"""Environment variable through which ``voxmetrics app`` hands :class:`DashboardSettings`
(as JSON) to the dashboard's pages."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable from this machine only.

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost")
    (True, True, True)
    >>> is_loopback("0.0.0.0"), is_loopback(""), is_loopback("192.168.1.20")
    (False, False, False)
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:  # a host name or "" (every interface): not loopback
        return False


def token_digest(token: str) -> str:
    """sha256 hex digest of an access token, as :attr:`DashboardSettings.token_sha256`.

    Examples
    --------
    >>> token_digest("a-long-access-token")[:12]
    'e2ed88f977e1'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class DashboardSettings:
    """What the operator chose at ``voxmetrics app`` that the pages must honour.

    The command line writes it as JSON into :data:`SETTINGS_ENV`; the pages read it back with
    :meth:`from_env`. Nothing in it comes from a browser.
    """

    host: str = "127.0.0.1"
    """The address the server listens on."""
    login: str | None = None
    """``"token"``, ``"oidc"`` (Streamlit's ``st.login``) or None (no login: loopback)."""
    token_sha256: str = ""
    """sha256 hex digest of the access token (the token itself is not kept)."""
    oidc_provider: str | None = None
    """The provider of ``st.login`` (a sub-table of ``[auth]`` in secrets.toml), or None."""
    allowed: tuple[str, ...] = ()
    """Who may log in with OIDC: e-mail addresses and ``@domain`` suffixes (empty: anyone the
    provider accepts)."""
    models: tuple[tuple[str, str], ...] = ()
    """Operator-listed ECAPA-TDNN model folders, ``(name, absolute path)``."""
    study: str | None = None
    """The ``.vxm`` study every new session opens (absolute path), or None for the demo."""

    @property
    def exposed(self) -> bool:
        """Whether the server listens beyond this machine."""
        return not is_loopback(self.host)

    def to_json(self) -> str:
        """The settings as one JSON object."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> DashboardSettings:
        """Read :meth:`to_json`'s output back."""
        raw = json.loads(text)
        return cls(
            host=str(raw.get("host", "127.0.0.1")),
            login=raw.get("login"),
            token_sha256=str(raw.get("token_sha256", "")),
            oidc_provider=raw.get("oidc_provider"),
            allowed=tuple(str(a) for a in raw.get("allowed", ())),
            models=tuple((str(n), str(p)) for n, p in raw.get("models", ())),
            study=raw.get("study"),
        )

    @classmethod
    def from_env(cls) -> DashboardSettings:
        """The settings ``voxmetrics app`` handed over (defaults when started otherwise)."""
        text = os.environ.get(SETTINGS_ENV)
        return cls() if not text else cls.from_json(text)
