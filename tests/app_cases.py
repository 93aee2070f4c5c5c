"""What the dashboard's tests share: emptying every cache and result store the app fills."""

from __future__ import annotations

import streamlit as st

from voxmetrics.ui import cache, cache_lid, cache_sbls, cache_verification, cache_zebra


def clear_app_caches() -> None:
    """Empty the caches and stores the pages fill (session state is new with every AppTest)."""
    st.cache_data.clear()
    cache._read_scores.clear()
    cache._read_embeddings.clear()
    cache.clear_study_report_store()
    cache_lid.clear_interval_store()
    cache_sbls.clear_sbls_store()
    cache_verification.clear()
    cache_zebra.clear()
