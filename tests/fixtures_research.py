"""pytest fixtures for the research area (imported by conftest.py)."""
