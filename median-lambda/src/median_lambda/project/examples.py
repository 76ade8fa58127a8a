"""Delete the examples: the README's "Make it yours", `median remove-examples` (`make remove-examples`).

    .venv/bin/median remove-examples        # the files, then the blocks
    .venv/bin/python -m median_lambda.project.examples   # the blocks alone (copier copy's task)

The example files are deleted by name (`EXAMPLE_FILES`), and only where each is still the
template's: a file of that name holding anything else may be the user's work, committed or not,
so one changed file stops the command before it deletes anything, naming the file and what to do.
Nothing else goes: not tests/tools/ itself, not a test or tool of the user's beside the
examples', not tests/tools/local_aws_seed.py (the seed hook is the user's, whatever it seeds).

An example tool on a real backend (tools/returns.py) also needs a table, a policy and a variable
in template.yaml, values in tools/settings.toml, and its table named in the pipeline's roles
(pipeline/oidc-role.yaml); the project's README says how to remove the examples. Each such block
sits between two lines, `# >>> example: <name>` and `# <<< example: <name>` (in the README,
`<!-- >>> example: <name> -->` and `<!-- <<< example: <name> -->`), which this deletes with
everything between them, in every file it names. Deleting them by hand is the same. Run again, it
finds nothing and changes nothing. An opened block that is not closed (or the reverse) fails with
its file and line, and nothing is written: a half-deleted template would not deploy.
`make swap-check` (maintainers/swap_examples.sh) runs it, so CI proves the template and the
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

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path.cwd()  # the project's: every command runs in its root, as make runs them
FILES = ("template.yaml", "tools/settings.toml", "pipeline/oidc-role.yaml", "README.md")
# The example tools, their shared store, their tests and the fixture those share, each with the sha256 of every
# text a release shipped it with (line endings read as \n): a project keeps the examples of the version it was
# copied from through every upgrade (copier update never touches tools/ or tests/tools/), so a later version
# knows each earlier one's. Changing an example adds its new digest here; tests/unit/test_remove_examples.py
# fails, naming the file, until it does. tools/__init__.py and tests/tools/__init__.py stay: the loader needs
# the package, and the user's tests theirs.
EXAMPLE_FILES: dict[str, tuple[str, ...]] = {
    "tools/orders.py": ("84d58daf8d8f2e1e76917d961514817429e3a11fd835f2896e5ab62edd10a96e",),
    "tools/_sample_store.py": ("e43bfd9ddedbf8667af7cf264b96aa6acb7f90e22021bdaa946936b9d72dac9b",),
    "tools/health.py": ("f92d3aca53a98178785ade61ff12dc4d44a2512e882dc4c41b7ec6e459985119",),
    "tools/returns.py": ("430325444c2c37c1ce67d1f22e02dfab278f4e504617b31cedb9408d4de15177",),
    "tests/tools/conftest.py": (
        "5d05d2c47626018ec30b9190b9423cd05c98ffc70135308028f832768cf154f5",  # 3.0.0
        "d254f637d803dc2c086f77da59d07d4427b2a56f86fff5adff8492952cf4217e",
    ),
    "tests/tools/test_health.py": ("2c75999c98989ac74a17fa6a9060c8aa7810f46fad32ba52cea37d55d2aab566",),
    "tests/tools/test_orders.py": ("d212d0ef03ac264889f8e02a6d80158092d8c007cbc48ff9abfc7ee45bc2c880",),
    "tests/tools/test_returns.py": ("d0ece258d0b5c011364105f3aaec37f9a05f46a86bcb61fff5296c4626cc4420",),
    "tests/tools/test_returns_template.py": ("21e78ea4ab77d29aa0e5471d2672ccef3331dfc26eb5758bd7b78de01aa5f86e",),
}
# The seed hook as the template ships it, which seeds the returns example's table and secret: kept, and said.
SEED_HOOK = "tests/tools/local_aws_seed.py"
SHIPPED_SEED_HOOK = ("072ea5ecba90b8fb0c584accdc5c6bf46bd52ee37f01691c394668a88b9b2c63",)
ANSWERS = ".copier-answers.yml"
_KEEP_EXAMPLES = re.compile(r"^keep_examples:.*$", re.MULTILINE)
NO_EXAMPLES = "keep_examples: false"
_OPENS = re.compile(r"^\s*(?:#|<!--) >>> example: (?P<name>[\w-]+)")
_CLOSES = re.compile(r"^\s*(?:#|<!--) <<< example: (?P<name>[\w-]+)")


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


def main(root: Path = ROOT, *, files: bool = False) -> int:
    """Delete the example blocks, and with `files` the example files first (`median remove-examples`): a block
    left open, or an example file that is no longer the template's (ChangedExamples), changes nothing."""
    edited: dict[Path, tuple[str, int]] = {}
    try:
        for name in FILES:
            path = root / name
            if path.exists():
                text, blocks = without_example_blocks(path.read_text(encoding="utf-8"), name)
                if blocks:
                    edited[path] = (text, blocks)
    except UnbalancedBlock as error:
        print(f"{error}; nothing was changed", file=sys.stderr)
        return 1
    for name in delete_example_files(root) if files else ():
        print(f"{name}: deleted")
    for path, (text, blocks) in edited.items():
        path.write_text(text, encoding="utf-8")
        print(f"{path.relative_to(root).as_posix()}: deleted {blocks} example block{'s' * (blocks != 1)}")
    if not edited:
        print("no example blocks left in " + ", ".join(FILES))
    if record_no_examples(root):
        print(f"{ANSWERS}: {NO_EXAMPLES}, so copier update and copier recopy leave the examples out")
    note = seed_hook_note(root) if files else None
    if note:
        print(note)
    return 0


class ChangedExamples(Exception):
    """Example files that are no longer the template's: the message names each and what to do."""


def digest(path: Path) -> str:
    """The sha256 of a file's text, its line endings read as \n (a checkout that writes \r\n changed nothing)."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def delete_example_files(root: Path = ROOT) -> list[str]:
    """Delete each example file that is still the template's; the names deleted. ChangedExamples, and nothing
    deleted, when any is not. `median remove-examples` runs it (never a Copier task: a project copied without
    the examples never had them)."""
    present = [name for name in EXAMPLE_FILES if (root / name).is_file()]
    changed = [name for name in present if digest(root / name) not in EXAMPLE_FILES[name]]
    if changed:
        listed = ", ".join(changed)
        raise ChangedExamples(
            f"{listed} {'is' if len(changed) == 1 else 'are'} no longer the template's example, and may hold your "
            "work: nothing was changed. Move what is yours to a name of your own (git mv FILE NEW_NAME), or delete "
            "the file yourself, then run make remove-examples again"
        )
    for name in present:
        (root / name).unlink()
    return present


def seed_hook_note(root: Path = ROOT) -> str | None:
    """What to say of the seed hook once the examples are gone: it is kept, and the shipped one seeds theirs."""
    hook = root / SEED_HOOK
    if hook.is_file() and digest(hook) in SHIPPED_SEED_HOOK:
        return (
            f"{SEED_HOOK}: kept, the hook make serve LOCAL_AWS=moto seeds your tools' tables with; it still seeds "
            "the returns example's table and secret, whose settings are gone: make it seed yours, or delete it"
        )
    return None


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
