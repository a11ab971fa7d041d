"""The approval authority: one place decides who may approve what, for every surface.

- ``key``: the one canonical request key (method, URL, every field) shared by the approval, the
  intent log and the send check;
- ``rules``: the risk rules (``rules.yaml``, validated into pydantic);
- ``identity``: proven identities (console login, CLI token, OS user);
- ``signing`` / ``seals``: the operator's HMAC key and what it signs;
- ``authority``: decisions (two-person rule, bulk), views that check a stored payload first;
- ``worker``: the worker's "may I send exactly this?"; ``terminal``: `taskcrew run`'s approvals;
- ``audit``: the tamper-evident audit log; ``cli``: `taskcrew approvals …`.
"""
