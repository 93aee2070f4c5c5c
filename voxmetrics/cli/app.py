"""``app``: start the Streamlit dashboard (``pip install "voxmetrics[app]"``)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import secrets
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from voxmetrics.cli._common import EXIT_OK
from voxmetrics.dashboard import SETTINGS_ENV, DashboardSettings, is_loopback, token_digest
from voxmetrics.errors import VoxMetricsInputError
from voxmetrics.limits import ENV_CONFIG

DASHBOARD_CONFIG: dict[str, str] = {
    "theme.base": "light",
    "theme.primaryColor": "#2E6F95",
    "theme.backgroundColor": "#FFFFFF",
    "theme.secondaryBackgroundColor": "#F2F5F8",
    "theme.textColor": "#1E2A33",
    # the menu is drawn by voxmetrics.ui.page_setup with st.page_link
    "client.showSidebarNavigation": "false",
    "client.toolbarMode": "minimal",
    "browser.gatherUsageStats": "false",
    # a float32 NPZ of a 22,024 x 4,949 score matrix is ~440 MB; Streamlit's default is 200 MB
    "server.maxUploadSize": "1024",
    # this machine only, unless the operator opens it with --host (and a login)
    "server.address": "127.0.0.1",
    "server.enableXsrfProtection": "true",
    "server.enableCORS": "true",
}
"""The Streamlit settings ``voxmetrics app`` passes on the command line (the same as the
repository's ``.streamlit/config.toml``), so they hold from any working folder."""

_PACKAGE = Path(__file__).resolve().parents[1]
"""The ``voxmetrics`` package folder."""

TOKEN_ENV = "VOXMETRICS_APP_TOKEN"
"""Environment variable an operator may set instead of ``--token`` (kept out of ``ps``)."""
BUILTIN_MODELS = ("ge2e", "ecapa")
"""Speaker encoders every dashboard offers: the offline GE2E and the official ECAPA-TDNN."""
MIN_TOKEN_LENGTH = 16
"""Shortest access token accepted: a short one could be guessed by trying."""
EXPOSED_DATA = (
    "the study (every condition's name and description), the per-trial tables, the figures "
    "derived from the scores and embeddings, every download (CSV, JSON, HTML and PDF reports) "
    "and the .vxm study file with every score and embedding inside"
)
"""What a visitor of the dashboard can see and download (named in the --host warning)."""


HELP = "start the dashboard (needs the app extra: pip install 'voxmetrics[app]')"
DESCRIPTION = (
    "Start the Streamlit dashboard on http://localhost:PORT and open it in a browser. "
    "It opens STUDY.vxm if given (for every visitor; the demo study otherwise) and runs the "
    "dashboard that ships inside the package with its own settings (theme, menu, 1 GB "
    "uploads, no usage statistics, XSRF protection) and without a file watcher, so an idle "
    "server uses no CPU; --dev watches the dashboard's files instead. It listens on this "
    "machine only (127.0.0.1); --host opens it to a network, behind a login (an access token, "
    "or OpenID Connect with --login oidc). Options after -- go to `streamlit run`, e.g. "
    "`voxmetrics app -- --server.headless true`. Stop it with Ctrl+C."
)


def dashboard_script() -> Path:
    """The dashboard's entry point, ``app.py``.

    An installed wheel ships the dashboard inside the package, as ``voxmetrics/_dashboard/``
    (``app.py`` and ``pages/``); a source checkout (or an editable install) has it at the
    repository root, next to the ``voxmetrics`` folder.
    """
    installed = _PACKAGE / "_dashboard" / "app.py"
    return installed if installed.is_file() else _PACKAGE.parent / "app.py"


def dashboard_command(
    *,
    port: int | None = None,
    dev: bool = False,
    host: str | None = None,
    streamlit_args: Sequence[str] = (),
) -> list[str]:
    """The ``streamlit run`` command line that ``voxmetrics app`` executes.

    Parameters
    ----------
    port : int, optional
        Server port (default: Streamlit's, 8501).
    dev : bool
        Watch the dashboard's files and rerun on save (for developing the pages); off by
        default, so the idle server touches no file and uses no CPU.
    host : str, optional
        The address to listen on (default 127.0.0.1: this machine only).
    streamlit_args : sequence of str
        More ``streamlit run`` options (e.g. ``--server.headless true``); they come last, so
        they override the ones above.

    Examples
    --------
    >>> cmd = dashboard_command(port=8600)
    >>> cmd[1:4], cmd[4].endswith("app.py")
    (['-m', 'streamlit', 'run'], True)
    >>> "--server.address=127.0.0.1" in cmd
    True
    >>> " ".join(cmd[cmd.index("--server.fileWatcherType") :][:4])
    '--server.fileWatcherType none --server.port 8600'
    """
    config = dict(DASHBOARD_CONFIG)
    if host is not None:
        config["server.address"] = host
    options = [f"--{key}={value}" for key, value in config.items()]
    options += ["--server.fileWatcherType", "auto" if dev else "none"]
    if dev:
        options += ["--server.runOnSave", "true"]
    if port is not None:
        options += ["--server.port", str(port)]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(dashboard_script()),
        *options,
        *streamlit_args,
    ]


def add_parser(subparsers: Any) -> None:
    """The ``app`` command and its options."""
    p = subparsers.add_parser("app", help=HELP, description=DESCRIPTION)
    p.add_argument("--port", type=int, help="server port (default 8501)")
    p.add_argument(
        "--host",
        metavar="ADDRESS",
        help="the address to listen on (default 127.0.0.1: this machine only); any other, "
        "e.g. 0.0.0.0 for every interface, opens the dashboard to the network behind a login",
    )
    p.add_argument(
        "--login",
        choices=("token", "oidc"),
        help="how visitors log in: an access token (the default with --host) or Streamlit's "
        "OpenID Connect login (st.login, configured in .streamlit/secrets.toml [auth])",
    )
    p.add_argument(
        "--token",
        help="the access token of --login token (at least 16 characters; default: the "
        f"environment variable {TOKEN_ENV}, else a random one, printed at start)",
    )
    p.add_argument(
        "--oidc-provider",
        metavar="NAME",
        help="with --login oidc: the provider, a sub-table [auth.NAME] of secrets.toml",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="EMAIL|@DOMAIN",
        help="with --login oidc: who may log in (repeatable; default: anyone the provider accepts)",
    )
    p.add_argument(
        "--model-dir",
        action="append",
        default=[],
        metavar="NAME=FOLDER",
        help="offer a local ECAPA-TDNN model folder (hyperparams.yaml + embedding_model.ckpt) "
        "on the Embeddings page under NAME (repeatable); besides GE2E and the official ECAPA, "
        "the only models the dashboard can load (also: a [models] table in voxmetrics.toml)",
    )
    p.add_argument(
        "--dev",
        action="store_true",
        help="watch the dashboard's files and rerun on save (for editing the pages)",
    )
    p.add_argument(
        "rest",
        nargs="*",
        metavar="STUDY.vxm",
        help="a study file every visitor starts with (instead of the demo study), then "
        "options passed on to `streamlit run` (after --)",
    )


def _split_rest(rest: Sequence[str]) -> tuple[str | None, list[str]]:
    """The study file (a first item that is no option) and the ``streamlit run`` options."""
    items = list(rest)
    if items and not items[0].startswith("-"):
        return items[0], items[1:]
    return None, items


def _address_option(streamlit_args: Sequence[str]) -> str | None:
    """The last ``--server.address`` among the ``streamlit run`` options, if any."""
    found = None
    for k, arg in enumerate(streamlit_args):
        if arg.startswith("--server.address="):
            found = arg.split("=", 1)[1]
        elif arg == "--server.address" and k + 1 < len(streamlit_args):
            found = streamlit_args[k + 1]
    return found


def _models(specs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=FOLDER`` options as ``(name, absolute folder)``, each checked."""
    models: dict[str, str] = {}
    for spec in specs:
        name, sep, folder = spec.partition("=")
        name = name.strip()
        if not sep or not re.fullmatch(r"[\w.-]{1,64}", name) or not folder.strip():
            raise VoxMetricsInputError(
                f"--model-dir {spec!r}: write NAME=FOLDER, NAME in letters, digits, '.', '-' "
                "and '_' (e.g. --model-dir my-ecapa=/srv/models/ecapa)."
            )
        if name in BUILTIN_MODELS or name in models:
            raise VoxMetricsInputError(
                f"--model-dir {spec!r}: the name {name!r} is taken; choose another."
            )
        path = Path(folder.strip()).expanduser()
        if not (path / "hyperparams.yaml").is_file():
            raise VoxMetricsInputError(
                f"--model-dir {spec!r}: {path} is not a folder with hyperparams.yaml; give a "
                "local ECAPA-TDNN model folder (hyperparams.yaml + embedding_model.ckpt)."
            )
        models[name] = str(path.resolve())
    return tuple(models.items())


def config_models(environ: Mapping[str, str] | None = None) -> list[str]:
    """The ``[models]`` table of the dashboard's config file as ``NAME=FOLDER`` options.

    The file is the one of the input limits: ``VOXMETRICS_CONFIG``, else ``voxmetrics.toml``
    in the working folder; a relative folder is relative to the file's.
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    path = Path(env.get(ENV_CONFIG) or "voxmetrics.toml")
    if not path.is_file():
        return []
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("models", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VoxMetricsInputError(f"{path}: not a valid TOML file ({exc}).") from None
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise VoxMetricsInputError(
            f'{path}: [models] lists NAME = "FOLDER" lines, e.g. my-ecapa = "/srv/ecapa".'
        )
    return [f"{name}={path.parent / Path(folder).expanduser()}" for name, folder in table.items()]


def _study(path: str | None) -> str | None:
    """The absolute path of a start-up study, read once here so a bad file fails now."""
    if path is None:
        return None
    from voxmetrics.data.studyfile import load_study

    file = Path(path).expanduser()
    if not file.is_file():
        raise VoxMetricsInputError(
            f"{path}: no such study file; give a .vxm file saved by the dashboard or by "
            "`voxmetrics study build`."
        )
    load_study(file)  # the safe reader: a damaged or hostile file is refused with its reason
    return str(file.resolve())


def _token(args: argparse.Namespace) -> tuple[str, bool]:
    """The access token and whether it was generated here."""
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    if token is None:
        return secrets.token_urlsafe(24), True
    if len(token.strip()) < MIN_TOKEN_LENGTH or token != token.strip():
        raise VoxMetricsInputError(
            f"--token: give at least {MIN_TOKEN_LENGTH} characters without surrounding "
            "spaces (or leave it out: a random token is made and printed)."
        )
    return token, False


def settings_from_args(
    args: argparse.Namespace, study: str | None, streamlit_args: Sequence[str]
) -> tuple[DashboardSettings, str | None]:
    """The dashboard's settings, and the generated access token to print (or None)."""
    host = _address_option(streamlit_args) or args.host or DASHBOARD_CONFIG["server.address"]
    login = args.login or (None if is_loopback(host) else "token")
    if login != "oidc" and (args.allow or args.oidc_provider):
        raise VoxMetricsInputError("--allow and --oidc-provider go with --login oidc.")
    token_sha256, printed = "", None
    if login == "token":
        token, generated = _token(args)
        token_sha256, printed = token_digest(token), token if generated else None
    elif args.token is not None:
        raise VoxMetricsInputError("--token goes with --login token (or --host alone).")
    settings = DashboardSettings(
        host=host,
        login=login,
        token_sha256=token_sha256,
        oidc_provider=args.oidc_provider,
        allowed=tuple(a.strip().lower() for a in args.allow if a.strip()),
        models=_models([*config_models(), *args.model_dir]),
        study=_study(study),
    )
    return settings, printed


def exposure_warning(settings: DashboardSettings, port: int | None) -> str:
    """The warning printed when the dashboard listens beyond this machine."""
    where = f"{settings.host or 'every interface'}:{port or 8501}"
    login = {
        "token": "the access token",
        "oidc": "an OpenID Connect login"
        + ("" if settings.allowed else " (any account the provider accepts: see --allow)"),
    }.get(settings.login or "", "no login")
    return (
        f"voxmetrics app: warning: listening on {where}, reachable from the network. "
        f"Whoever reaches it and logs in with {login} can see and download {EXPOSED_DATA}; "
        "they can upload data and run the listed speaker encoders on this server. Each "
        "browser session sees only its own study (and the one given at start, if any). "
        "The connection is plain HTTP unless "
        "you serve it through HTTPS (a reverse proxy, or Streamlit's server.sslCertFile)."
    )


def run(args: argparse.Namespace) -> int:
    """``app``: hand this process over to ``streamlit run`` (a child process off POSIX)."""
    if importlib.util.find_spec("streamlit") is None:
        raise VoxMetricsInputError(
            "the dashboard needs Streamlit, which is not installed: pip install "
            "'voxmetrics[app]' (or pip install -r requirements.txt in a checkout)."
        )
    script = dashboard_script()
    if not script.is_file():
        raise VoxMetricsInputError(
            f"the dashboard is missing ({script}): an installed VoxMetrics ships it as "
            "voxmetrics/_dashboard/app.py, a checkout has app.py at the repository root; "
            "reinstall VoxMetrics."
        )
    if args.port is not None and not 0 < args.port < 65536:
        raise VoxMetricsInputError(f"--port {args.port}: give a port between 1 and 65535.")
    study, streamlit_args = _split_rest(args.rest)
    settings, generated = settings_from_args(args, study, streamlit_args)
    if settings.exposed:
        print(exposure_warning(settings, args.port), file=sys.stderr)
    if generated is not None:
        print(f"voxmetrics app: access token (enter it in the browser): {generated}")
    os.environ[SETTINGS_ENV] = settings.to_json()  # read by the pages (voxmetrics.ui)
    cmd = dashboard_command(
        port=args.port, dev=args.dev, host=settings.host, streamlit_args=streamlit_args
    )
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # Streamlit takes over this process: Ctrl+C and signals reach it
        os.execv(cmd[0], cmd)
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK
