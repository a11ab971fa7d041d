"""Stage a public product manual the project did not write, for the retrieval benchmarks.

    uv run python bench/stage_foreign_docs.py --from PATH [--to bench/data/foreign/gnucash-guide]

PATH is a clone or a bare git directory of the GnuCash guide in reStructuredText
(repository codesmythe/gnucash-docs-rst, GFDL). The chapters (``source/guide/C/*.rst``) of its
newest commit are written to the target folder with a STAGED.txt naming the commit; nothing is
downloaded here. The staged files are git-ignored (third-party text): see bench/data/foreign/README.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "bench" / "data" / "foreign" / "gnucash-guide"
CHAPTERS = "source/guide/C/"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True
    ).stdout


def stage(source: Path, target: Path) -> int:
    repo = source / ".git" if (source / ".git").exists() else source
    try:
        commit = _git(repo, "rev-parse", "HEAD").strip()
        names = [
            n
            for n in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", CHAPTERS).split()
            if n.endswith(".rst")
        ]
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"error: {source} is not a git clone of the GnuCash guide in RST ({exc})", file=sys.stderr)
        return 2
    if not names:
        print(f"error: {source} has no {CHAPTERS}*.rst; is it codesmythe/gnucash-docs-rst?", file=sys.stderr)
        return 2
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = _git(repo, "show", f"HEAD:{name}")
        (target / Path(name).name).write_text(text, encoding="utf-8")
    (target / "STAGED.txt").write_text(
        f"GnuCash Tutorial and Concepts Guide (GFDL), codesmythe/gnucash-docs-rst {commit}\n",
        encoding="utf-8",
    )
    print(f"staged {len(names)} chapters of commit {commit[:12]} in {target}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--from", dest="source", type=Path, required=True, help="clone or git dir")
    parser.add_argument("--to", dest="target", type=Path, default=TARGET)
    args = parser.parse_args()
    return stage(args.source, args.target)


if __name__ == "__main__":
    sys.exit(main())
