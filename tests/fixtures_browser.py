"""pytest fixtures for the browser area (imported by conftest.py)."""
