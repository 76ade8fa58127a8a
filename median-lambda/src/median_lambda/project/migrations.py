"""What a version asks of a project's own files, done for it by `make upgrade`, after the merge.

    python -m median_lambda.project.migrations     # by hand: what is due, as the upgrade guard runs it

The upgrade guard (upgrade_guard.py) runs `migrate` after every merge, whatever Copier says the
project's version is: each migration is due where the project's own files, as committed before the
upgrade, say it is, never on a version number alone. Copier reads a project copied from a commit
no release tag names as 0.0.0.postN, so a version gate would rewrite a 3.x project's own imports
on every upgrade.

3.0.0: the framework is median-lambda, a library, where it was the project's handler/ package and
its helpers in scripts/. Due where the project's handler/ holds the framework's modules
(handler/testing/, handler/calls/, ...), which 3.x's handler/ (the function's entry point alone)
never does. A tool imports `from median_lambda import tool` where it imported `from handler import
tool`, and a test `from median_lambda.testing import MedianTestClient`. This rewrites those import
statements in the project's own Python files (tools/ and tests/), read as Python (ast), and nothing
else in them: each import of the framework's old package, `handler` and its modules, becomes the
same import of median_lambda, and one of a helper of scripts/ (the examples' tests import one) that
of the module of median-lambda it is now. What `import handler.testing` bound, `handler`, is used as
`handler.testing.X`: each such use names median_lambda's module instead. Strings, docstrings and
comments are never touched. A file that cannot be read as Python (not UTF-8 nor declaring its
encoding, a syntax error) is named, left as it is, and the rest migrated. Each file changed is
named; `git diff` shows every line. Run again, it finds nothing to change.

In a 2.x project `handler` was the project's own package, sorted apart from the third-party
imports; median_lambda is a dependency, which ruff sorts with them. So the imports of the files it
changed are then sorted by the project's own ruff (`ruff check --fix --select I`, as `make lint`
wants them; nothing else in them changes), where the project's venv has it, with the project's
settings, or the template's (120 columns) while pyproject.toml holds a conflict the merge left;
where it has no ruff, it says to run `make format` once the venv is made.

SnapStart as a stage's parameter (due where template.yaml holds the conflict below, after the guard has
put back what the merge lost): up to 3.0.0, a project switched SnapStart on by editing one line of template.yaml,
`SnapStartEnabled: !Equals ["on", "on"]`, for every stack it deploys; the next version makes it
the parameter EnableSnapStart, which each stage sets in samconfig.toml, and rewrites that line,
so the merge leaves the two between conflict markers. Where the user's side of that conflict is
the 3.0.0 lines with that one edit and nothing else, this takes the new version's lines, and
adds `EnableSnapStart=true` to the `parameter_overrides` of each of samconfig.toml's deploy
sections (`make deploy`'s and each stage's, as the edit switched it on for all), naming each.
Any other conflict there is left for the user, as the CHANGELOG says.

Standard library only: it runs in Copier's interpreter, before the project's venv has the new version.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path.cwd()  # the project's: Copier runs its migrations in the project's root
# The project's own Python: its tools and their tests (and any other test of the project's), but the
# contract suite a 2.x project held, which was the template's (the upgrade deletes it).
OWN_FOLDERS = ("tools", "tests")
NOT_OWN = ("tests/contract/",)
_FRAMEWORK_MODULES = (
    "testing",
    "rules",
    "authoring",
    "calls",
    "key",
    "manifest",
    "request",
    "runtime",
    "protocol",
    "app",
    "cli",
    "snapstart",
)
# What a 2.x project's handler/ held and 3.x's never does (its handler/ is __init__.py and app.py).
_ONLY_IN_2X = {"testing", "rules.py", "authoring", "calls", "key", "manifest", "request", "runtime", "protocol.py"}
# The helpers of a 2.x project's scripts/ that a test of the user's may import (the examples' do),
# each now a module of median-lambda's.
SCRIPTS = {
    "remove_example_blocks": "median_lambda.project.examples",
    "set_architecture": "median_lambda.project.architecture",
    "sam_settings": "median_lambda.project.sam_config",
    "lock": "median_lambda.project.lock",
    "audit": "median_lambda.project.audit",
    "upgrade": "median_lambda.project.upgrade",
    "artifact_sources": "median_lambda.build.sources",
    "compile_artifact": "median_lambda.build.compile",
    "check_artifact": "median_lambda.build.check",
    "check_template": "median_lambda.cli.template_check",
    "deploy_preflight": "median_lambda.cli.preflight",
    "smoke_check": "median_lambda.cli.smoke_check",
    "sam_local_check": "median_lambda.cli.local_check",
    "port_free": "median_lambda.cli.port_free",
}
# The dotted name an import statement's module starts with, as written (`handler . testing` is one).
_DOTTED = re.compile(r"\w+(?:[ \t\\\r\n]*\.[ \t\\\r\n]*\w+)*")
_FROM = re.compile(r"from[ \t\\\r\n]+")


def new_module(dotted: str) -> str | None:
    """median_lambda's module for a 2.x module of the framework (`handler.testing.aws`), None for any other."""
    top, _, rest = dotted.partition(".")
    first = rest.split(".", 1)[0]
    if top == "handler" and (not rest or first in _FRAMEWORK_MODULES):
        return "median_lambda" + (f".{rest}" if rest else "")
    if top == "scripts" and first in SCRIPTS:
        return SCRIPTS[first] + rest.removeprefix(first)
    return None


def _dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of names and attributes, None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted_name(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


class _Rewrite(ast.NodeVisitor):
    """The edits that make a module's imports of the framework median_lambda's: (start, end, text), as offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        # Where each line starts, split as Python splits them (never at \f or \v, as str.splitlines does).
        self.line_starts = [0, *(found.end() for found in re.finditer(r"\r\n|\r|\n", source))]
        self.edits: list[tuple[int, int, str]] = []
        self.statements = 0
        # The names `import handler.testing` (no `as`) bound, whose uses now name median_lambda's module.
        self.rebound: set[str] = set()

    def offset(self, line: int, column: int) -> int:
        start = self.line_starts[line - 1]
        # ast counts a column in UTF-8 bytes.
        text = self.source[start : start + column]
        return start + len(text.encode("utf-8")[:column].decode("utf-8", errors="ignore"))

    def visit_Import(self, node: ast.Import) -> None:
        changed = False
        for alias in node.names:
            replacement = new_module(alias.name)
            if replacement is None:
                continue
            start = self.offset(alias.lineno, alias.col_offset)
            written = _DOTTED.match(self.source, start)
            if written is None:
                continue
            self.edits.append((start, written.end(), replacement))
            if alias.asname is None:
                self.rebound.add(alias.name.split(".", 1)[0])
            changed = True
        self.statements += changed

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        replacement = new_module(node.module or "") if node.level == 0 else None
        if replacement is None:
            return
        keyword = _FROM.match(self.source, self.offset(node.lineno, node.col_offset))
        written = _DOTTED.match(self.source, keyword.end()) if keyword else None
        if written is None:
            return
        self.edits.append((written.start(), written.end(), replacement))
        self.statements += 1

    def rewrite_uses(self, tree: ast.Module) -> None:
        """`handler.testing.X` where `import handler.testing` bound `handler`: the same use of median_lambda's."""
        if not self.rebound:
            return
        waiting: list[ast.AST] = [tree]
        while waiting:
            node = waiting.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
                dotted = _dotted_name(node)
                replacement = new_module(dotted) if dotted else None
                if dotted and replacement and dotted.split(".", 1)[0] in self.rebound:
                    start = self.offset(node.lineno, node.col_offset)
                    end = self.offset(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
                    self.edits.append((start, end, replacement))
                    continue
            waiting.extend(ast.iter_child_nodes(node))

    def applied(self) -> str:
        text = self.source
        for start, end, replacement in sorted(self.edits, reverse=True):
            text = text[:start] + replacement + text[end:]
        return text


def imports_of_median_lambda(source: str) -> tuple[str, int]:
    """`source` with each import statement of the framework's old package made one of median_lambda's (and the
    uses of the names it bound); how many statements. Raises SyntaxError where `source` is not Python."""
    tree = ast.parse(source)
    rewrite = _Rewrite(source)
    rewrite.visit(tree)
    rewrite.rewrite_uses(tree)
    return rewrite.applied(), rewrite.statements


def _read_python(path: Path) -> tuple[str, str]:
    """A module's text and its encoding (UTF-8, or what its coding line declares, PEP 263), its newlines as
    they are; UnicodeDecodeError or SyntaxError where it is neither. A module that names neither old package
    reads as empty: there is nothing to migrate in it, readable or not."""
    data = path.read_bytes()
    if b"handler" not in data and b"scripts" not in data:
        return "", "utf-8"
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def was_2x(root: Path = ROOT) -> bool:
    """The project, as committed before this upgrade, is a 2.x one: its handler/ holds the framework's modules."""
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", "HEAD", "handler/"],  # noqa: S607 - the user's git, as Copier runs it
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return listed.returncode == 0 and any(Path(name).name in _ONLY_IN_2X for name in listed.stdout.splitlines())


def to_3_0_0(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """Rewrite the framework's imports in the project's own files: (the files changed, a line said for each file
    changed or left unread)."""
    changed: list[str] = []
    said: list[str] = []
    for folder in OWN_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            shown = path.relative_to(root).as_posix()
            if shown.startswith(NOT_OWN) or not path.is_file():
                continue
            try:
                source, encoding = _read_python(path)
                rewritten, count = imports_of_median_lambda(source)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as unreadable:
                reason = unreadable.msg if isinstance(unreadable, SyntaxError) else str(unreadable)
                said.append(
                    f"{shown}: not migrated, it could not be read as Python ({reason}): change its imports of "
                    "handler to median_lambda by hand"
                )
                continue
            if count:
                path.write_bytes(rewritten.encode(encoding))
                changed.append(shown)
                said.append(f"{shown}: {count} import{'s' * (count != 1)} of handler now of median_lambda")
    return changed, said


def sorted_by_the_projects_ruff(paths: list[str], root: Path = ROOT) -> bool:
    """The project's own ruff sorts the imports of `paths`; False where its venv has no ruff, or it could not."""
    ruff = root / ".venv" / "bin" / "ruff"
    if not paths or not ruff.is_file():
        return False
    sort = [str(ruff), "check", "--fix", "--quiet", "--select", "I"]
    # Exit 2: ruff could not read the project's settings (a pyproject.toml the merge left in conflict).
    for settings in ([], ["--isolated", "--line-length", "120", "--target-version", "py313"]):
        sorted_ = subprocess.run([*sort, *settings, *paths], cwd=root, capture_output=True, check=False)  # noqa: S603
        if sorted_.returncode != 2:
            return sorted_.returncode == 0
    return False


def to_3_0_0_sorted(root: Path = ROOT) -> list[str]:
    """to_3_0_0, then the files it changed sorted and formatted as `make lint` wants them; the lines said."""
    changed, said = to_3_0_0(root)
    if changed and not sorted_by_the_projects_ruff(changed, root):
        said.append("run `make format` once `make install` has made the venv: ruff sorts median_lambda's imports")
    return said


# template.yaml's SnapStart switch as 3.0.0 wrote it, switched on by its one line, and the line as the user edits it.
SNAPSTART_SWITCH_3_0_0 = """\
  # Lambda SnapStart: new instances resume from a snapshot taken when a version is published,
  # instead of starting Python (the performance guide). Off, as written: billed for the snapshot's
  # cache and per restore; not in every region; not with provisioned concurrency, EFS, or more
  # than 512 MB of ephemeral storage. To switch it on, make this one line read
  #   SnapStartEnabled: !Equals ["on", "on"]
  # The function then snapshots its published versions and leaves the extension out (below),
  # and VersionDescription says so, which publishes a new version at the next deploy.
  SnapStartEnabled: !Equals ["off", "on"]
"""
SWITCHED_OFF = '  SnapStartEnabled: !Equals ["off", "on"]\n'
SWITCHED_ON = '  SnapStartEnabled: !Equals ["on", "on"]\n'
AS_A_PARAMETER = "SnapStartEnabled: !Equals [!Ref EnableSnapStart,"
SNAPSTART_ON = "EnableSnapStart=true"
# What `copier update --conflict inline` leaves around a change it could not merge: the user's side, then the
# new version's.
_CONFLICT = re.compile(
    r"^<<<<<<< before updating\n(?P<yours>.*?)^=======\n(?P<theirs>.*?)^>>>>>>> after updating\n",
    re.MULTILINE | re.DOTALL,
)
_DEPLOY_SECTION = re.compile(r"^\[(?P<environment>[^.\]]+)\.deploy\.parameters\]\s*$")
_OVERRIDES = re.compile(r'^(?P<head>parameter_overrides\s*=\s*")(?P<values>.*)"\s*$')


def _snapstart_switch_conflicts(text: str) -> list[re.Match[str]]:
    """The conflicts of template.yaml whose user's side is the 3.0.0 SnapStart switch, turned on, and nothing else."""
    return [
        found
        for found in _CONFLICT.finditer(text)
        if SWITCHED_ON in (yours := found["yours"].splitlines(keepends=True))
        and "".join(SWITCHED_OFF if line == SWITCHED_ON else line for line in yours) == SNAPSTART_SWITCH_3_0_0
        and AS_A_PARAMETER in found["theirs"]
    ]


def holds_the_snapstart_switch_conflict(root: Path = ROOT) -> bool:
    """Whether the merge left template.yaml's 3.0.0 SnapStart switch, turned on, in conflict with the parameter."""
    template = root / "template.yaml"
    return template.is_file() and bool(_snapstart_switch_conflicts(template.read_text(encoding="utf-8")))


def snapstart_as_a_parameter(root: Path = ROOT) -> list[str]:
    """The 3.0.0 SnapStart switch turned on, merged into EnableSnapStart=true for every deploy; the lines said."""
    template = root / "template.yaml"
    text = template.read_text(encoding="utf-8") if template.is_file() else ""
    resolved = _snapstart_switch_conflicts(text)
    if not resolved:
        return []
    (found,) = resolved
    text = text[: found.start()] + found["theirs"] + text[found.end() :]
    template.write_text(text, encoding="utf-8")
    if _CONFLICT.search(text) is None:
        # Copier recorded the file as unmerged in git's index: it is merged now, and left unstaged like the rest.
        for arguments in (("add", "--", template.name), ("reset", "--quiet", "--", template.name)):
            subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True)  # noqa: S603, S607
    switched = _switch_on_in_every_deploy(root / "samconfig.toml")
    return [
        "template.yaml: SnapStart, switched on by its line, is the parameter EnableSnapStart now; "
        f"{SNAPSTART_ON} added to samconfig.toml's {', '.join(f'[{name}.deploy.parameters]' for name in switched)}"
    ]


def _switch_on_in_every_deploy(samconfig: Path) -> list[str]:
    """EnableSnapStart=true appended to each deploy section's parameter_overrides; the sections' config-envs."""
    if not samconfig.is_file():
        return []
    lines = samconfig.read_text(encoding="utf-8").splitlines(keepends=True)
    section, switched = None, []
    for at, line in enumerate(lines):
        header = _DEPLOY_SECTION.match(line)
        if line.startswith("["):
            section = header["environment"] if header else None
            continue
        overrides = _OVERRIDES.match(line.rstrip("\n"))
        if section is not None and overrides is not None and SNAPSTART_ON.split("=")[0] not in overrides["values"]:
            values = f"{overrides['values']} {SNAPSTART_ON}".strip()
            lines[at] = f'{overrides["head"]}{values}"\n'
            switched.append(section)
    samconfig.write_text("".join(lines), encoding="utf-8")
    return switched


# Each version's migration, oldest first, with what says a project needs it.
MIGRATIONS: tuple[tuple[str, Callable[[Path], bool], Callable[[Path], list[str]]], ...] = (
    ("3.0.0", was_2x, to_3_0_0_sorted),
    ("3.1.0", holds_the_snapstart_switch_conflict, snapstart_as_a_parameter),
)


def migrate(root: Path = ROOT) -> list[str]:
    """Every migration the project's files say is due, in order; the lines said."""
    return [line for _, due, run in MIGRATIONS if due(root) for line in run(root)]


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m median_lambda.project.migrations", file=sys.stderr)
        return 2
    for line in migrate():
        print(f"upgrade: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
