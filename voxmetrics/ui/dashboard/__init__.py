"""The dashboard's Streamlit scripts: ``app.py`` (the home page) and ``pages/``.

Run with ``voxmetrics app`` (see :func:`voxmetrics.cli.dashboard_command`); these files are
scripts, not modules to import.
"""
