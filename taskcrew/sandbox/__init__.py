"""The demo company's files: the inbox (``inbox/``), its ground truth (``documents.yaml``) and the
generator that renders one from the other (``generate.py``). See docs/sandbox.md."""
