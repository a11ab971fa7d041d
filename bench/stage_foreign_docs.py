"""Stage a public product manual the project did not write, for the retrieval benchmarks.

    uv run python bench/stage_foreign_docs.py [--set gnucash] --from PATH [--to bench/data/foreign/gnucash-guide]
    uv run python bench/stage_foreign_docs.py --set erpnext --from PATH [--to bench/data/foreign/erpnext-accounts]

gnucash (the default): PATH is a clone or a bare git directory of the GnuCash guide in
reStructuredText (repository codesmythe/gnucash-docs-rst, GFDL). The chapters
(``source/guide/C/*.rst``) of its newest commit are written to the target folder.

erpnext: the Accounts chapter of the ERPNext v13 user manual (repository
frappe/erpnext_documentation, documentation licensed CC-BY-SA-3.0), i.e. every ``.md`` file under
``erpnext_documentation/www/docs/v13/user/manual/en/accounts/``. PATH is a clone or a bare git
directory of that repository (its newest commit is read), or a plain folder holding the same
relative paths. The files are written flat, since results are matched by file name: a file of a
subfolder gets the subfolder as a prefix (``articles/freeze-account.md`` ->
``articles-freeze-account.md``).

Each target folder gets a STAGED.txt naming the source (and the commit when read from git);
nothing is downloaded here. The staged files are git-ignored (third-party text): see
bench/data/foreign/README.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOREIGN = ROOT / "bench" / "data" / "foreign"
TARGET = FOREIGN / "gnucash-guide"
CHAPTERS = "source/guide/C/"
ERPNEXT_TARGET = FOREIGN / "erpnext-accounts"
ERPNEXT_CHAPTER = "erpnext_documentation/www/docs/v13/user/manual/en/accounts/"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True, encoding="utf-8"
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


def _flat(relative: str) -> str:
    """``articles/freeze-account.md`` -> ``articles-freeze-account.md``."""
    return relative.replace("/", "-")


def _erpnext_files(source: Path) -> tuple[dict[str, str], str]:
    """The chapter's Markdown files (path below the chapter -> text) and a line naming the source.
    Raises ValueError when PATH holds neither a git repository nor a folder with the chapter."""
    if (source / ".git").exists() or ((source / "HEAD").is_file() and (source / "objects").is_dir()):
        repo = source / ".git" if (source / ".git").exists() else source
        commit = _git(repo, "rev-parse", "HEAD").strip()
        names = _git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD", ERPNEXT_CHAPTER).split("\0")
        texts = {
            n.removeprefix(ERPNEXT_CHAPTER): _git(repo, "show", f"HEAD:{n}")
            for n in names
            if n.endswith(".md")
        }
        return texts, f"frappe/erpnext_documentation {commit}"
    chapter = source / ERPNEXT_CHAPTER
    if not chapter.is_dir():
        raise ValueError(f"it is neither a git clone nor a folder holding {ERPNEXT_CHAPTER}")
    texts = {
        p.relative_to(chapter).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(chapter.rglob("*.md"))
        if p.is_file()
    }
    return texts, f"the folder {source.resolve()} (same paths as frappe/erpnext_documentation)"


def stage_erpnext(source: Path, target: Path) -> int:
    try:
        texts, origin = _erpnext_files(source)
    except (ValueError, subprocess.CalledProcessError, FileNotFoundError) as exc:
        detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else exc
        print(f"error: cannot read {source} as frappe/erpnext_documentation: {detail}", file=sys.stderr)
        return 2
    if not texts:
        print(
            f"error: {source} has no {ERPNEXT_CHAPTER}**.md; is it frappe/erpnext_documentation?",
            file=sys.stderr,
        )
        return 2
    flat = {_flat(relative): text for relative, text in texts.items()}
    if len(flat) != len(texts):
        print("error: two files of the chapter would get the same flat name", file=sys.stderr)
        return 2
    target.mkdir(parents=True, exist_ok=True)
    for name, text in flat.items():
        (target / name).write_text(text, encoding="utf-8")
    (target / "STAGED.txt").write_text(
        f"ERPNext v13 user manual, Accounts chapter (documentation licence CC-BY-SA-3.0), from {origin}\n",
        encoding="utf-8",
    )
    print(f"staged {len(flat)} files of the ERPNext Accounts chapter from {origin} in {target}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--set", dest="set_name", choices=("gnucash", "erpnext"), default="gnucash", help="which manual"
    )
    parser.add_argument(
        "--from", dest="source", type=Path, required=True, help="clone or git dir (erpnext: or a folder)"
    )
    parser.add_argument(
        "--to",
        dest="target",
        type=Path,
        default=None,
        help="default: bench/data/foreign/gnucash-guide or erpnext-accounts",
    )
    args = parser.parse_args()
    if args.set_name == "erpnext":
        return stage_erpnext(args.source, args.target or ERPNEXT_TARGET)
    return stage(args.source, args.target or TARGET)


if __name__ == "__main__":
    sys.exit(main())
