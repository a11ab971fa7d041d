"""Research tools: a python sandbox, web_fetch, web_search backends and their CrewAI tools.

Plain logic lives in ``python_sandbox``, ``web``, ``search`` and ``extract`` (no crewai import);
``crew_tools`` is the thin CrewAI edge. See docs/research.md.
"""
