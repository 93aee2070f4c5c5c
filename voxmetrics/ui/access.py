"""Who may see the dashboard, and what the operator let it load: the gate of every page.

``voxmetrics app`` hands its :class:`~voxmetrics.dashboard.DashboardSettings` to the pages
(:func:`server_settings`). On this machine only (the default, 127.0.0.1) there is no login;
opened to a network (``--host``) every page asks for one first, through :func:`require_login`,
which :func:`~voxmetrics.ui.page_setup` calls before it reads or shows any study:

* ``token``: the access token printed (or given) at start, entered once per browser session
  and compared in constant time (:func:`hmac.compare_digest` of sha256 digests);
* ``oidc``: Streamlit's OpenID Connect login (``st.login``, configured by the operator in
  ``.streamlit/secrets.toml`` under ``[auth]``), optionally restricted to listed e-mail
  addresses or domains.

The speaker encoders the Embeddings page may load are the built-in ones and the folders the
operator listed (:func:`speaker_encoders`); the browser picks one by name, never by path.
"""

from __future__ import annotations

import hmac
import importlib.util
import os

import streamlit as st

from voxmetrics.dashboard import SETTINGS_ENV, DashboardSettings, is_loopback, token_digest
from voxmetrics.embeddings.extractors import DEFAULT_ECAPA

__all__ = [
    "LOGIN_KEY",
    "logout_button",
    "require_login",
    "server_settings",
    "speaker_encoders",
    "token_matches",
]

LOGIN_KEY = "vm_logged_in"
"""Session-state key set once the session's visitor entered the right access token."""
_TOKEN_INPUT = "vm_access_token"
_LOGIN_ERROR = "vm_login_error"

BUILTIN_ENCODERS: dict[str, tuple[str, str]] = {
    "ge2e": ("ge2e", "GE2E (offline, Resemblyzer weights; a different attacker model)"),
    "ecapa": ("ecapa", f"ECAPA-TDNN ({DEFAULT_ECAPA}; downloads once)"),
}
"""The encoders every dashboard offers: key -> (model given to ``load_extractor``, label)."""


def server_settings() -> DashboardSettings:
    """What the operator chose at ``voxmetrics app`` (the defaults when started otherwise)."""
    return DashboardSettings.from_env()


def speaker_encoders() -> dict[str, tuple[str, str]]:
    """The speaker encoders the dashboard may load: key -> (model, label shown).

    The built-in GE2E and the official ECAPA-TDNN, then each folder the operator listed with
    ``voxmetrics app --model-dir NAME=FOLDER``. A page offers the keys; only the server maps
    a key to a folder.
    """
    encoders = dict(BUILTIN_ENCODERS)
    for name, folder in server_settings().models:
        encoders[f"dir:{name}"] = (folder, f"ECAPA-TDNN: {name} (set up by the operator)")
    return encoders


def token_matches(entered: str, expected_sha256: str) -> bool:
    """Whether ``entered`` is the access token whose sha256 digest is ``expected_sha256``.

    The digests are compared with :func:`hmac.compare_digest` (constant time).

    Examples
    --------
    >>> digest = token_digest("a-long-access-token")
    >>> token_matches("a-long-access-token", digest), token_matches("guess", digest)
    (True, False)
    >>> token_matches("", "")
    False
    """
    if not expected_sha256 or not entered:
        return False
    got = token_digest(entered)
    return hmac.compare_digest(got.encode(), expected_sha256.encode())


def _check_token() -> None:
    entered = st.session_state.get(_TOKEN_INPUT) or ""
    st.session_state[_TOKEN_INPUT] = ""  # not kept in the session
    if token_matches(entered.strip(), server_settings().token_sha256):
        st.session_state[LOGIN_KEY] = True
        st.session_state.pop(_LOGIN_ERROR, None)
    else:
        st.session_state[_LOGIN_ERROR] = True


def _token_login() -> None:
    st.title("VoxMetrics")
    st.markdown(
        "This dashboard is shared on a network: enter the access token that the person "
        "who started it gave you."
    )
    with st.form("vm_login_form"):
        st.text_input("Access token", type="password", key=_TOKEN_INPUT)
        st.form_submit_button("Log in", on_click=_check_token, icon=":material/login:")
    if st.session_state.get(_LOGIN_ERROR):
        st.error("That is not the access token. Ask the person who started the dashboard.")


def _auth_configured(provider: str | None) -> bool:
    try:
        auth = st.secrets.get("auth")
    except Exception:  # no secrets.toml, or a broken one
        return False
    if not auth:
        return False
    return provider is None or provider in auth


def _email_allowed(email: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``email`` is listed, or ends with a listed ``@domain`` (case-insensitive).

    Examples
    --------
    >>> _email_allowed("Ana@Lab.org", ("@lab.org",)), _email_allowed("x@evil.org", ("@lab.org",))
    (True, False)
    >>> _email_allowed("x@lab.org.evil", ("@lab.org",)), _email_allowed("", ())
    (False, False)
    >>> _email_allowed("bo@uni.edu", ())
    True
    """
    email = email.strip().lower()
    if not email:
        return False
    if not allowed:
        return True
    return any(email == a or (a.startswith("@") and email.endswith(a)) for a in allowed)


def _authlib_installed() -> bool:
    """Whether Authlib, which ``st.login`` needs, is installed."""
    return importlib.util.find_spec("authlib") is not None


def _oidc_login(settings: DashboardSettings) -> bool:
    """Streamlit's OpenID Connect login; True once an allowed account is logged in."""
    provider = settings.oidc_provider
    if not _auth_configured(provider):
        st.error(
            "This dashboard is set to log visitors in with OpenID Connect, but no provider "
            "is configured: the person who started it must add an [auth] section to "
            ".streamlit/secrets.toml (see the deployment guide)."
        )
        return False
    if not st.user.is_logged_in:
        if not _authlib_installed():
            st.error(
                "This dashboard is set to log visitors in with OpenID Connect, which needs "
                "Authlib on the server: pip install 'streamlit[auth]', then restart it."
            )
            return False
        st.title("VoxMetrics")
        st.markdown("This dashboard is shared on a network: log in to see it.")
        args = () if provider is None else (provider,)
        st.button("Log in", key="vm_oidc_login", on_click=st.login, args=args)
        return False
    email = str(st.user.get("email") or "")
    verified = st.user.get("email_verified", True) is not False
    if not (verified and _email_allowed(email, settings.allowed)):
        st.error(
            f"The account {email or '(without an e-mail address)'} may not see this "
            "dashboard. Log out and use another, or ask the person who started it."
        )
        st.button("Log out", key="vm_oidc_denied_logout", on_click=st.logout)
        return False
    return True


def require_login() -> None:
    """The gate of every page: stop it here unless its visitor may see the dashboard.

    No login on this machine only; with ``--host`` (or ``--login``) the visitor enters the
    access token, or logs in with OpenID Connect, before anything else of the page runs. A
    dashboard served on a network address without ``voxmetrics app`` (``streamlit run app.py
    --server.address 0.0.0.0``) shows nothing but how to start it with a login.
    """
    settings = server_settings()
    if settings.login is None:
        address = st.get_option("server.address")
        if SETTINGS_ENV in os.environ or not address or is_loopback(str(address)):
            return
        # `streamlit run app.py --server.address ADDRESS`: on a network, with no login set up
        st.error(
            f"This dashboard listens on {address} without a login. Start it with "
            f"`voxmetrics app --host {address}`, which asks visitors for an access token."
        )
        st.stop()
    if settings.login == "token":
        if st.session_state.get(LOGIN_KEY) is True:
            return
        _token_login()
    elif settings.login == "oidc":
        if _oidc_login(settings):
            return
    else:  # an unknown mode: fail closed
        st.error(f"Unknown login mode {settings.login!r}: restart with `voxmetrics app`.")
    st.stop()


def _logout_token() -> None:
    st.session_state.clear()


def logout_button() -> None:
    """A sidebar button that ends the session's login (nothing without a login)."""
    login = server_settings().login
    if login == "token":
        st.button("Log out", key="vm_logout", on_click=_logout_token, icon=":material/logout:")
    elif login == "oidc":
        st.button("Log out", key="vm_logout", on_click=st.logout, icon=":material/logout:")
