"""What a version asks of a project's own files, done for it by `make upgrade` (Copier's migrations).

    python -m median_lambda.project.migrations v3.0.0     # copier.yml runs it, after the update

3.0.0: the framework is median-lambda, a library, where it was the project's handler/ package and
its helpers in scripts/. A tool imports `from median_lambda import tool` where it imported `from
handler import tool`, and a test `from median_lambda.testing import MedianTestClient`. This rewrites
those imports in the project's own Python files (tools/ and tests/), and nothing else in them: each
import of the framework's old package, `handler` and its modules, becomes the same import of
median_lambda, and one of a helper of scripts/ (the examples' tests import one) that of the module
of median-lambda it is now; the project's handler/ itself, now the function's entry point, is the
template's. Each file it
changes is named; `git diff` shows every line. Run again, it finds nothing to change.

In a 2.x project `handler` was the project's own package, sorted apart from the third-party
imports; median_lambda is a dependency, which ruff sorts with them. So the imports of the files it
changed are then sorted by the project's own ruff (`ruff check --fix --select I`, as `make lint`
wants them; nothing else in them changes), where the project's venv has it, with the project's
settings, or the template's (120 columns) while pyproject.toml holds a conflict the merge left;
where it has no ruff, it says to run `make format` once the venv is made.

SnapStart as a stage's parameter (run after every update, after the guard; it acts only where
this applies): up to 3.0.0, a project switched SnapStart on by editing one line of template.yaml,
`SnapStartEnabled: !Equals ["on", "on"]`, for every stack it deploys; the next version makes it
the parameter EnableSnapStart, which each stage sets in samconfig.toml, and rewrites that line,
so the merge leaves the two between conflict markers. Where the user's side of that conflict is
the 3.0.0 lines with that one edit and nothing else, this takes the new version's lines, and
adds `EnableSnapStart=true` to the `parameter_overrides` of each of samconfig.toml's deploy
sections (`make deploy`'s and each stage's, as the edit switched it on for all), naming each.
Any other conflict there is left for the user, as the CHANGELOG says.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
)
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
_SCRIPTS = re.compile(rf"^(?P<head>\s*(?:from|import)\s+)scripts\.(?P<name>{'|'.join(SCRIPTS)})\b", re.MULTILINE)
_IMPORTS = (
    # from handler import tool / from handler.testing import MedianTestClient
    re.compile(
        rf"^(?P<head>\s*from\s+)handler(?P<tail>(?:\.(?:{'|'.join(_FRAMEWORK_MODULES)})\b[\w.]*)?\s+import\b)", re.M
    ),
    # import handler.testing (as ...)
    re.compile(rf"^(?P<head>\s*import\s+)handler(?P<tail>\.(?:{'|'.join(_FRAMEWORK_MODULES)})\b)", re.M),
)


def imports_of_median_lambda(source: str) -> tuple[str, int]:
    """`source` with each import of the framework's old package made one of median_lambda's; how many."""
    count = 0
    for pattern in _IMPORTS:
        source, replaced = pattern.subn(r"\g<head>median_lambda\g<tail>", source)
        count += replaced
    source, replaced = _SCRIPTS.subn(lambda found: found["head"] + SCRIPTS[found["name"]], source)
    return source, count + replaced


def to_3_0_0(root: Path = ROOT) -> list[str]:
    """Rewrite the framework's imports in the project's own files; the lines said, one per file changed."""
    said = []
    for folder in OWN_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.relative_to(root).as_posix().startswith(NOT_OWN):
                continue
            source = path.read_text(encoding="utf-8")
            rewritten, count = imports_of_median_lambda(source)
            if count:
                path.write_text(rewritten, encoding="utf-8")
                said.append(
                    f"{path.relative_to(root)}: {count} import{'s' * (count != 1)} of handler now of median_lambda"
                )
    return said


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
    """to_3_0_0, then the files it changed sorted and formatted as `make lint` wants them."""
    said = to_3_0_0(root)
    changed = [line.split(":", 1)[0] for line in said]
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


def snapstart_as_a_parameter(root: Path = ROOT) -> list[str]:
    """The 3.0.0 SnapStart switch turned on, merged into EnableSnapStart=true for every deploy; the lines said."""
    template = root / "template.yaml"
    if not template.is_file():
        return []
    text = template.read_text(encoding="utf-8")
    resolved = [
        found
        for found in _CONFLICT.finditer(text)
        if SWITCHED_ON in (yours := found["yours"].splitlines(keepends=True))
        and "".join(SWITCHED_OFF if line == SWITCHED_ON else line for line in yours) == SNAPSTART_SWITCH_3_0_0
        and AS_A_PARAMETER in found["theirs"]
    ]
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


MIGRATIONS = {"v3.0.0": to_3_0_0_sorted, "snapstart-parameter": snapstart_as_a_parameter}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in MIGRATIONS:
        print(f"usage: python -m median_lambda.project.migrations {'|'.join(MIGRATIONS)}", file=sys.stderr)
        return 2
    for line in MIGRATIONS[argv[0]]():
        print(f"upgrade: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
