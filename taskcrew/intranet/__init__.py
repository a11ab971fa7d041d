"""Acme Connect: the demo company's intranet (vendor portal and company news), part of the mock world.

Pages are data files under ``pages/`` (YAML front matter + an HTML fragment); ``server.py`` serves
them over real HTTP with a site search. See docs/research.md for every page and route.
"""

DEFAULT_PORT = 8801
