"""pytest fixtures for the erp area (imported by conftest.py)."""
