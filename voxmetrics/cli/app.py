"""``app``: start the Streamlit dashboard (``pip install "voxmetrics[app]"``)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voxmetrics.cli._common import EXIT_OK
from voxmetrics.errors import VoxMetricsInputError

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
}
"""The Streamlit settings ``voxmetrics app`` passes on the command line (the same as the
repository's ``.streamlit/config.toml``), so they hold from any working folder."""

_PACKAGE = Path(__file__).resolve().parents[1]
"""The ``voxmetrics`` package folder."""

HELP = "start the dashboard (needs the app extra: pip install 'voxmetrics[app]')"
DESCRIPTION = (
    "Start the Streamlit dashboard on http://localhost:PORT and open it in a browser. "
    "It runs the dashboard that ships inside the package with its own settings "
    "(theme, menu, 1 GB uploads, no usage statistics) and without a file watcher, so "
    "an idle server uses no CPU; --dev watches the dashboard's files instead. "
    "Options after -- go to `streamlit run`, e.g. `voxmetrics app -- "
    "--server.headless true --server.address 0.0.0.0`. Stop it with Ctrl+C."
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
    *, port: int | None = None, dev: bool = False, streamlit_args: Sequence[str] = ()
) -> list[str]:
    """The ``streamlit run`` command line that ``voxmetrics app`` executes.

    Parameters
    ----------
    port : int, optional
        Server port (default: Streamlit's, 8501).
    dev : bool
        Watch the dashboard's files and rerun on save (for developing the pages); off by
        default, so the idle server touches no file and uses no CPU.
    streamlit_args : sequence of str
        More ``streamlit run`` options (e.g. ``--server.headless true``); they come last, so
        they override the ones above.

    Examples
    --------
    >>> cmd = dashboard_command(port=8600)
    >>> cmd[1:4], cmd[4].endswith("app.py")
    (['-m', 'streamlit', 'run'], True)
    >>> " ".join(cmd[cmd.index("--server.fileWatcherType") :][:4])
    '--server.fileWatcherType none --server.port 8600'
    """
    options = [f"--{key}={value}" for key, value in DASHBOARD_CONFIG.items()]
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
        "--dev",
        action="store_true",
        help="watch the dashboard's files and rerun on save (for editing the pages)",
    )
    p.add_argument(
        "streamlit_args",
        nargs="*",
        metavar="-- STREAMLIT_OPTION",
        help="options passed on to `streamlit run` (after --)",
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
    cmd = dashboard_command(port=args.port, dev=args.dev, streamlit_args=args.streamlit_args)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":  # Streamlit takes over this process: Ctrl+C and signals reach it
        os.execv(cmd[0], cmd)
    try:
        return subprocess.call(cmd)
    except KeyboardInterrupt:
        return EXIT_OK
