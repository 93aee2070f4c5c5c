"""Browser tests: the real dashboard in headless Chromium (fixtures in conftest.py)."""
