"""What the dashboard's tests share: emptying every cache and result store the app fills."""

from __future__ import annotations

import streamlit as st

from voxmetrics.ui.computing import clear_caches


def clear_app_caches() -> None:
    """Empty the stores the pages fill (session state is new with every AppTest)."""
    st.cache_data.clear()
    clear_caches()
