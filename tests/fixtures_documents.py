"""pytest fixtures for the documents area (imported by conftest.py)."""
