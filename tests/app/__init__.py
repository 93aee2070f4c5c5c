"""The dashboard's pages through Streamlit's AppTest, one file per page (test_<page>.py)."""
