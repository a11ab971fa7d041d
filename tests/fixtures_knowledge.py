"""pytest fixtures for the knowledge area (imported by conftest.py)."""
