"""Delete what the example tools keep outside their own files: the README's "Make it yours".

    .venv/bin/python -m scripts.remove_example_blocks

An example tool on a real backend (tools/returns.py) needs a table, a policy and a variable in
template.yaml, values in tools/settings.toml, and its table named in the pipeline's roles
(pipeline/oidc-role.yaml). Each such block sits between two lines,
`# >>> example: <name>` and `# <<< example: <name>`, which this deletes with everything
between them, in every file it names. Deleting them by hand is the same. Run again, it finds
nothing and changes nothing. An opened block that is not closed (or the reverse) fails with
its file and line, and nothing is written: a half-deleted template would not deploy.
`make swap-check` (scripts/swap_examples.sh) runs it, so CI proves the template and the
settings still build and check without the examples.

It also records `keep_examples: false` in .copier-answers.yml, the answer `copier copy` would
have been given for a project without the examples: `copier recopy` then leaves the example
tools, their tests and their blocks out, and `copier update` replays the template's changes on
renders without them, as the project is, instead of bringing back (or conflicting over) what was
deleted. Copier's own road to a changed answer, `copier update --data keep_examples=false`, would
merge the template's deletion of the blocks into a project that has already deleted them. Only
the standard library: `copier copy` runs this as a task with Copier's own Python.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ("template.yaml", "tools/settings.toml", "pipeline/oidc-role.yaml")
ANSWERS = ".copier-answers.yml"
_KEEP_EXAMPLES = re.compile(r"^keep_examples:.*$", re.MULTILINE)
NO_EXAMPLES = "keep_examples: false"
_OPENS = re.compile(r"^\s*# >>> example: (?P<name>[\w-]+)")
_CLOSES = re.compile(r"^\s*# <<< example: (?P<name>[\w-]+)")


class UnbalancedBlock(ValueError):
    pass


def without_example_blocks(text: str, shown_as: str) -> tuple[str, int]:
    """The text without its example blocks, and how many there were; or UnbalancedBlock naming the line."""
    kept: list[str] = []
    opened: tuple[str, int] | None = None
    blocks = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        opens, closes = _OPENS.match(line), _CLOSES.match(line)
        if opens:
            if opened is not None:
                raise UnbalancedBlock(f"{shown_as}:{number}: an example block opens inside the one at line {opened[1]}")
            opened = (opens["name"], number)
        elif closes:
            if opened is None or closes["name"] != opened[0]:
                raise UnbalancedBlock(f"{shown_as}:{number}: this closes an example block that was not opened")
            opened, blocks = None, blocks + 1
        elif opened is None:
            kept.append(line)
    if opened is not None:
        closing = f"# <<< example: {opened[0]}"
        raise UnbalancedBlock(f"{shown_as}:{opened[1]}: this example block is never closed ({closing})")
    return "".join(kept), blocks


def main(root: Path = ROOT) -> int:
    edited: dict[Path, str] = {}
    try:
        for name in FILES:
            path = root / name
            if path.exists():
                text, blocks = without_example_blocks(path.read_text(encoding="utf-8"), name)
                if blocks:
                    edited[path] = text
                    print(f"{name}: deleted {blocks} example block{'s' * (blocks != 1)}")
    except UnbalancedBlock as error:
        print(f"{error}; nothing was changed", file=sys.stderr)
        return 1
    for path, text in edited.items():
        path.write_text(text, encoding="utf-8")
    if not edited:
        print("no example blocks left in " + " or ".join(FILES))
    if record_no_examples(root):
        print(f"{ANSWERS}: {NO_EXAMPLES}, so copier update and copier recopy leave the examples out")
    return 0


def record_no_examples(root: Path) -> bool:
    """`keep_examples: false` in the project's Copier answers; whether that changed the file (none: nothing to do)."""
    path = root / ANSWERS
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if _KEEP_EXAMPLES.search(text):
        recorded = _KEEP_EXAMPLES.sub(NO_EXAMPLES, text, count=1)
    else:  # answers from before the question: Copier reads a key added at the end as any other
        recorded = text + ("" if text.endswith("\n") or not text else "\n") + NO_EXAMPLES + "\n"
    if recorded == text:
        return False
    path.write_text(recorded, encoding="utf-8")
    return True


if __name__ == "__main__":
    sys.exit(main())
