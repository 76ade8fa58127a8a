"""`make template-proof`: the template as its users take it, proven end to end (issue 26).

    python -m maintainers.template_proof [--keep]

In a temporary folder, from a clone of this checkout (its uncommitted changes committed there):
1. a project with other answers (stack name, stages, x86_64, no examples), copied from this
   version: `make lint test check build` pass on it at once;
2. a project copied from the previous release, changed as a user would (a scaffolded tool, a
   tool of its own on its own systems with its tests: a setting in every stage, a secret, a
   table, a dependency; a local settings file; a resource and an output in template.yaml's
   `# >>> yours` blocks), then upgraded to this version (median-lambda and the template's files
   together) with its own `make upgrade`, doing what CHANGELOG.md's "What you must do" asks of
   each version crossed: nothing of the user's is changed but what a version's migration does for
   them, the template's changes are all there, `make lint test check build` pass, and the built
   artifact holds no developer's tooling.
Any step that fails fails the proof. The previous release is the newest vX.Y.Z tag before this
commit; a clone without tags (CI's may have none) gets them from CHANGELOG.md, each release's
heading found in the commit that added it (docs/releasing.md). Maintainers only: copier.yml
excludes this file from projects.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIER = ROOT / ".venv" / "copier" / "bin" / "copier"
RELEASE_HEADING = re.compile(r"^## \[(?P<version>\d+\.\d+\.\d+)\]", re.MULTILINE)
# What a user owns: copier update must leave it byte for byte.
USERS_OWN = ("tools", "tests/tools")
# The user's additions to template.yaml, between the lines the template keeps for them.
USER_RESOURCE = """  LoyaltyTable:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Properties:
      BillingMode: PAY_PER_REQUEST
      KeySchema:
        - AttributeName: email
          KeyType: HASH
      AttributeDefinitions:
        - AttributeName: email
          AttributeType: S
"""
USER_OUTPUT = """  LoyaltyTableName:
    Description: The loyalty table's name.
    Value: !Ref LoyaltyTable
"""
# A value in every stage: [default]'s, and each stage's own (the previous release's default stages).
USER_SETTINGS = {
    "default": 'LOYALTY_API_URL = "http://127.0.0.1:9"\nLOYALTY_TABLE = "loyalty-local"\n'
    'LOYALTY_TOKEN_SECRET = "loyalty/api-token"\n',
    "staging": 'LOYALTY_API_URL = "https://loyalty.staging.example.com"\n',
    "production": 'LOYALTY_API_URL = "https://loyalty.example.com"\n',
}
USER_DEPENDENCY = '    "python-dateutil>=2.9",\n'
# The user's own tool on their own systems (a setting, a secret, a table, a dependency) and its test,
# written against the framework's package of the version copied: handler before 3.0.0, median_lambda after.
USER_TOOL = """\
from __future__ import annotations

{imports}


class LoyaltySettings(Settings):
    loyalty_table: str  # LOYALTY_TABLE
    loyalty_api_url: str  # LOYALTY_API_URL


class BalanceInput(BaseModel):
    email: str = Field(description="The customer's email address.")


@tool(risk="low", idempotent=False)
def loyalty_balance(
    args: BalanceInput,
    ctx: ToolContext,
    settings: LoyaltySettings,
    token: str = Secret(setting="LOYALTY_TOKEN_SECRET"),
) -> dict[str, int]:
    \"\"\"Tell how many loyalty points the customer has, and since which year they collect them.\"\"\"
    item = ctx.aws_client("dynamodb").get_item(TableName=settings.loyalty_table, Key={{"email": {{"S": args.email}}}})
    if "Item" not in item or not token:
        raise ToolError("No loyalty account uses that email; ask the customer for the one they signed up with.")
    return {{"points": int(item["Item"]["points"]["N"]), "since": parser.isoparse(item["Item"]["since"]["S"]).year}}
"""
USER_TEST = """\
from {package}.testing import MedianAWS, MedianTestClient


def test_the_balance_comes_from_the_loyalty_table(median_aws: MedianAWS) -> None:
    median_aws.create_secret("loyalty/api-token", "a-token")
    dynamodb = median_aws.client("dynamodb")
    dynamodb.create_table(
        TableName="loyalty-local",
        KeySchema=[{{"AttributeName": "email", "KeyType": "HASH"}}],
        AttributeDefinitions=[{{"AttributeName": "email", "AttributeType": "S"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {{"email": {{"S": "ada@example.com"}}, "points": {{"N": "120"}}, "since": {{"S": "2021-03-04"}}}}
    dynamodb.put_item(TableName="loyalty-local", Item=item)
    answer = MedianTestClient().call("loyaltyBalance", {{"email": "ada@example.com"}})
    assert answer.status == 200
    assert answer.body["output"] == {{"points": 120, "since": 2021}}
"""


class ProofFailed(Exception):
    pass


def grant_the_pipeline_the_users_table(project: Path) -> list[str]:
    """2.0.0: the pipeline's CloudFormation role creates a table of the user's by its logical id."""
    role = project / "pipeline" / "oidc-role.yaml"
    text = role.read_text(encoding="utf-8")
    marker = "# <<< yours: tables"
    if marker not in text:
        raise ProofFailed(f"pipeline/oidc-role.yaml has no `{marker}` line for the user's tables")
    # The first block is the CloudFormation role's (what the stack creates); the user's function
    # calls no table of its own in this proof, so the boundary's block stays empty.
    start = text.rindex("\n", 0, text.index(marker)) + 1
    indent = text[start : text.index(marker)]
    table = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${AppStackName}-LoyaltyTable-*"
    line = f"{indent}- !Sub {table}\n"
    role.write_text(text[:start] + line + text[start:], encoding="utf-8")
    return ["pipeline/oidc-role.yaml"]


# The framework's packages a 2.x project listed itself, which median-lambda brings from 3.0.0 on.
FRAMEWORKS_OWN = ("aws-lambda-powertools", "pydantic")
_CONFLICT = re.compile(
    r"^<<<<<<< before updating\n(?P<yours>.*?)^=======\n(?P<theirs>.*?)^>>>>>>> after updating\n", re.M | re.S
)


def keep_the_users_dependencies(project: Path) -> list[str]:
    """3.0.0: pyproject.toml's [project].dependencies, which the upgrade leaves in conflict where the user added a
    package: the template's lines, with each package of the user's beneath them, not the framework's; then make lock."""
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")

    def resolved(conflict: re.Match[str]) -> str:
        yours = [
            line
            for line in conflict["yours"].splitlines(keepends=True)
            if line.strip().startswith('"') and not line.strip().strip('"').startswith(FRAMEWORKS_OWN)
        ]
        return conflict["theirs"] + "".join(line for line in yours if line not in conflict["theirs"])

    resolved_text = _CONFLICT.sub(resolved, text)
    if resolved_text == text:
        return []
    pyproject.write_text(resolved_text, encoding="utf-8")
    make(project, "lock")
    return ["pyproject.toml", "uv.lock"]


# What each version's "What you must do" (CHANGELOG.md) asks of this proof's user, by version: done after
# an upgrade that crosses the version, and, by a user who copied that version or a later one, as they
# add what it concerns (its docs say so from the start).
USERS_MUST_DO = {(2, 0, 0): grant_the_pipeline_the_users_table, (3, 0, 0): keep_the_users_dependencies}


def step(message: str) -> None:
    print(f"\n--- template-proof: {message}", file=sys.stderr, flush=True)


def run(command: list[str], cwd: Path, *, render_only: bool = False, **options: object) -> str:
    """Run a command; its output goes through; a failure fails the proof, naming the command.

    As a user's shell runs it: with uv on PATH (a user runs `uvx copier copy`), the dev venv's, and
    nothing of this repository's make or tests. `render_only`: a copy made only to compare files with,
    which the template's lock task skips (median_lambda/project/upgrade_guard.py renders so too).
    """
    environment = {**os.environ, "MAKEFLAGS": "", "MAKELEVEL": "", "VIRTUAL_ENV": ""}
    for name in ("MEDIAN_STAGE", "MEDIAN_TOOLS_PACKAGE", "PYTHONPATH"):
        environment.pop(name, None)
    environment["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    environment.setdefault("UV_PYTHON", sys.executable)
    if render_only:
        environment["MEDIAN_RENDER_ONLY"] = "1"
    result = subprocess.run(command, cwd=cwd, env=environment, text=True, check=False, **options)  # type: ignore[call-overload]  # noqa: S603
    if result.returncode != 0:
        raise ProofFailed(f"`{' '.join(command)}` failed in {cwd} (exit {result.returncode})")
    return result.stdout or ""


def git(cwd: Path, *arguments: str) -> str:
    return run(["git", *arguments], cwd, capture_output=True)


def template_clone(scratch: Path) -> Path:
    """A clone of this checkout, with what the working tree changed committed, and every release tagged."""
    clone = scratch / "template"
    run(["git", "clone", "--quiet", "--no-local", str(ROOT), str(clone)], scratch)
    git(clone, "config", "user.email", "proof@example.invalid")
    git(clone, "config", "user.name", "template proof")
    changed = git(ROOT, "ls-files", "-z", "--modified", "--others", "--exclude-standard").split("\0")
    deleted = set(git(ROOT, "ls-files", "-z", "--deleted").split("\0"))
    for name in filter(None, changed):
        source, target = ROOT / name, clone / name
        if name in deleted or not source.exists():
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    if git(clone, "status", "--porcelain"):
        git(clone, "add", "-A")
        git(clone, "commit", "--quiet", "-m", "The working tree's changes, for the proof")
    tag_releases(clone)
    return clone


def tag_releases(clone: Path) -> None:
    """vX.Y.Z on the commit that added `## [X.Y.Z]` to CHANGELOG.md, for each release not tagged yet."""
    tags = set(git(clone, "tag", "--list", "v*").split())
    changelog = (clone / "CHANGELOG.md").read_text(encoding="utf-8")
    for version in RELEASE_HEADING.findall(changelog):
        if f"v{version}" in tags:
            continue
        added = git(clone, "log", "--format=%H", "--reverse", "-S", f"## [{version}]", "--", "CHANGELOG.md").split()
        if not added:
            raise ProofFailed(f"CHANGELOG.md's release {version} was added by no commit this clone has")
        git(clone, "tag", f"v{version}", added[0])


def previous_release(clone: Path) -> str | None:
    """The newest release tag that is not this commit's own."""
    here = git(clone, "rev-parse", "HEAD").strip()
    for tag in git(clone, "tag", "--list", "v*", "--sort=-v:refname", "--merged", "HEAD").split():
        if git(clone, "rev-list", "-n", "1", tag).strip() != here:
            return tag
    return None


def previous_major_release(clone: Path) -> str | None:
    """The newest release of the major version before median-lambda's here (2.0.0 for 3.x), if any."""
    major = library_version(clone)[0]
    for tag in git(clone, "tag", "--list", "v*", "--sort=-v:refname", "--merged", "HEAD").split():
        if version_of(tag)[0] < major:
            return tag
    return None


def copy(clone: Path, project: Path, ref: str, answers: dict[str, str]) -> None:
    data = [item for name, value in answers.items() for item in ("--data", f"{name}={value}")]
    run(
        [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", ref, *data, str(clone), str(project)],
        clone,
    )
    git(project, "init", "--quiet")
    git(project, "config", "user.email", "user@example.invalid")
    git(project, "config", "user.name", "a user")
    git(project, "add", "-A")
    git(project, "commit", "--quiet", "-m", "copier copy")


def make(project: Path, *targets: str) -> None:
    run(["make", "--no-print-directory", *targets], project)


def version_of(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.removeprefix("v").split("."))


def upgrade(project: Path, previous_tag: str) -> list[str]:
    """`make upgrade`, then what each version crossed asks of the user; the files that doing it touched."""
    step(f"make upgrade VERSION=HEAD: {previous_tag} -> this version")
    try:
        make(project, "upgrade", "VERSION=HEAD")
        upgraded = True
    except ProofFailed:
        upgraded = False
    due = [do for version, do in sorted(USERS_MUST_DO.items()) if version > version_of(previous_tag)]
    if not due:
        if not upgraded:
            raise ProofFailed(f"make upgrade failed, and no version since {previous_tag} asks anything of its user")
        return []
    step("do what CHANGELOG.md's 'What you must do' asks, then make lint test check")
    touched = [name for do in due for name in do(project)]
    make(project, "lint", "test", "check")
    return touched


def framework_package(tag: str) -> str:
    """The package a user's tools import the framework from, in the version `tag`."""
    return "handler" if version_of(tag) < (3, 0, 0) else "median_lambda"


def user_tool_imports(package: str) -> str:
    """The tool's imports as ruff sorts them: handler is the project's own, median_lambda a dependency."""
    dateutil = "from dateutil import parser  # type: ignore[import-untyped]  # the user installs no stubs for it"
    framework = f"from {package} import Secret, Settings, ToolContext, ToolError, tool"
    pydantic = "from pydantic import BaseModel, Field"
    if package == "handler":
        return f"{dateutil}\n{pydantic}\n\n{framework}"
    return f"{dateutil}\n{framework}\n{pydantic}"


def act_as_a_user(project: Path, tag: str) -> list[str]:
    """What a user does with a project copied from `tag` over a few weeks, committed; the template's files it changed
    beside template.yaml and pyproject.toml."""
    make(project, "new-tool", "NAME=loyalty_points")
    package = framework_package(tag)
    (project / "tools" / "loyalty.py").write_text(
        USER_TOOL.format(imports=user_tool_imports(package)), encoding="utf-8"
    )
    (project / "tests" / "tools" / "test_loyalty.py").write_text(USER_TEST.format(package=package), encoding="utf-8")
    settings = project / "tools" / "settings.toml"
    text = settings.read_text(encoding="utf-8")
    for stage, line in USER_SETTINGS.items():
        if f"[{stage}]\n" not in text:
            raise ProofFailed(f"tools/settings.toml has no [{stage}] table for the user's value")
        text = text.replace(f"[{stage}]\n", f"[{stage}]\n{line}", 1)
    settings.write_text(text, encoding="utf-8")
    (project / "tools" / "settings.local.toml").write_text('LOYALTY_API_URL = "http://127.0.0.1:8"\n', encoding="utf-8")
    template = project / "template.yaml"
    text = template.read_text(encoding="utf-8")
    for block, addition in (("resources", USER_RESOURCE), ("outputs", USER_OUTPUT)):
        marker = f"# <<< yours: {block}"
        if marker not in text:
            raise ProofFailed(f"template.yaml has no `{marker}` line for a user's {block}")
        index = text.index(marker)
        index = text.rindex("\n", 0, index) + 1
        text = text[:index] + addition + text[index:]
    template.write_text(text, encoding="utf-8")
    touched = [
        name for version, do in sorted(USERS_MUST_DO.items()) if version <= version_of(tag) for name in do(project)
    ]
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "\ndependencies = [\n" not in text:
        raise ProofFailed("pyproject.toml has no [project] dependencies list for the user's dependency")
    pyproject.write_text(
        text.replace("\ndependencies = [\n", "\ndependencies = [\n" + USER_DEPENDENCY, 1), encoding="utf-8"
    )
    make(project, "lock")
    make(project, "lint")
    git(project, "add", "-A")
    git(project, "commit", "--quiet", "-m", "A tool, its settings and its table of our own")
    return touched


def migrated(project: Path, name: str, content: bytes, previous_tag: str) -> bytes:
    """A user's file as the migrations of the versions after `previous_tag` leave it (copier.yml's _migrations):
    3.0.0 rewrites the framework's imports, then sorts them with the project's own ruff."""
    if version_of(previous_tag) >= (3, 0, 0) or not name.endswith(".py"):
        return content
    from median_lambda.project.migrations import imports_of_median_lambda

    source, count = imports_of_median_lambda(content.decode("utf-8"))
    if not count:
        return content
    ruff = str(project / ".venv" / "bin" / "ruff")
    sort = [ruff, "check", "--fix", "--quiet", "--select", "I", "--stdin-filename", str(project / name), "-"]
    return (run(sort, project, input=source, capture_output=True) or source).encode("utf-8")


def files_under(root: Path, folders: tuple[str, ...]) -> dict[str, bytes]:
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def check_the_upgrade(
    project: Path, users: dict[str, bytes], fresh: Path, previous: Path, must_do: list[str]
) -> list[str]:
    """What went wrong: the user's files changed, their blocks lost, or a template change missing."""
    problems = []
    now = files_under(project, USERS_OWN)
    problems += [f"{name}: changed by the upgrade" for name in sorted(users) if now.get(name) != users[name]]
    problems += [
        f"{name}: median-lambda's import migration left `handler` imports in it"
        for name, content in now.items()
        if name.endswith(".py") and re.search(rb"(?m)^\s*(from|import) handler\b", content)
    ]
    problems += [f"{name}: added by the upgrade" for name in sorted(set(now) - set(users))]
    template = (project / "template.yaml").read_text(encoding="utf-8")
    problems += [
        f"template.yaml lost the user's {what}"
        for what in ("LoyaltyTable:", "LoyaltyTableName:")
        if what not in template
    ]
    if "python-dateutil" not in (project / "pyproject.toml").read_text(encoding="utf-8"):
        problems.append("pyproject.toml lost the user's dependency")
    # The template's own files: those the user never touched are now exactly this version's, and
    # every line this version added to one the user did touch is in it.
    touched = {"template.yaml", "pyproject.toml", "uv.lock", ".copier-answers.yml", *must_do}
    changed_by_the_template = 0
    for path in sorted(fresh.rglob("*")):
        name = str(path.relative_to(fresh))
        if not path.is_file() or name.startswith((".git/", *(f"{folder}/" for folder in USERS_OWN))):
            continue
        before = previous / name
        if not before.is_file() or before.read_bytes() != path.read_bytes():
            changed_by_the_template += 1
        mine = project / name
        if not mine.is_file():
            problems.append(f"{name}: this version's file is missing")
        elif name not in touched and mine.read_bytes() != path.read_bytes():
            problems.append(f"{name}: differs from this version's")
        elif name in touched and name != "uv.lock" and before.is_file():
            added = set(path.read_text(encoding="utf-8").splitlines()) - set(
                before.read_text(encoding="utf-8").splitlines()
            )
            kept = set(mine.read_text(encoding="utf-8").splitlines())
            problems += [
                f"{name}: this version's line is missing: {line.strip()}"
                for line in sorted(added - kept)
                if line.strip()
            ]
    if not changed_by_the_template:
        # Right after a release, or when only maintainer files changed since one: nothing to take,
        # and the proof still holds that taking nothing leaves the project whole and green.
        step("this version changes no file a project holds since the previous release: the upgrade is a no-op")
    return problems


def prove(scratch: Path) -> None:
    started = time.monotonic()
    step(f"the template, cloned with its releases tagged, in {scratch}")
    clone = template_clone(scratch)

    step("copy this version with other answers, then make lint test check build")
    other = scratch / "other-answers"
    copy(
        clone,
        other,
        "HEAD",
        {"stack_name": "acme-returns", "stages": "[dev, prod]", "architecture": "x86_64", "keep_examples": "false"},
    )
    make(other, "lint", "test", "check", "build")
    run([str(other / ".venv" / "bin" / "median"), "check-artifact"], other)

    previous_tag = previous_release(clone)
    if previous_tag is None:
        step("no earlier release to upgrade from: the copy alone is proven")
        return
    # A user may stay on a major version for years and skip every release since: the previous major's
    # newest upgrades too, whenever it is not the previous release itself.
    origins = dict.fromkeys(filter(None, (previous_major_release(clone), previous_tag)))
    for tag in origins:
        prove_the_upgrade_from(tag, clone, scratch)
    prove_the_next_upgrade(clone, scratch)
    step(
        f"passed in {time.monotonic() - started:.0f} s: a new project works at once, {' and '.join(origins)} "
        "upgrade, and this version takes the next one with its own make upgrade, and a fork's with SOURCE="
    )


def prove_the_upgrade_from(previous_tag: str, clone: Path, scratch: Path) -> None:
    """A project copied from `previous_tag` and worked in as a user, upgraded to this version by its own make upgrade
    and what CHANGELOG.md asks: all the user's kept, all the template's taken, and its build holds no developer part."""
    step(f"copy the release {previous_tag}, and work in it as a user")
    project = scratch / f"project-{previous_tag}"
    copy(clone, project, previous_tag, {})
    changed_by_the_user = act_as_a_user(project, previous_tag)
    before = files_under(project, USERS_OWN)

    must_do = [*changed_by_the_user, *upgrade(project, previous_tag)]
    # What the user's files must be once upgraded: as they left them, but for what a version crossed
    # migrates for them (3.0.0: the framework's imports are median_lambda's, sorted as its ruff sorts).
    users = {name: migrated(project, name, content, previous_tag) for name, content in before.items()}
    fresh, previous = scratch / f"fresh-{previous_tag}", scratch / f"previous-{previous_tag}"
    copying = [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref"]
    run([*copying, "HEAD", str(clone), str(fresh)], clone, render_only=True)
    run([*copying, previous_tag, str(clone), str(previous)], clone, render_only=True)
    problems = check_the_upgrade(project, users, fresh, previous, must_do)
    if problems:
        raise ProofFailed(f"the upgrade from {previous_tag} is not what a user must get:\n  " + "\n  ".join(problems))
    make(project, "build")
    run([str(project / ".venv" / "bin" / "median"), "check-artifact"], project)


LIBRARY_VERSION = re.compile(r'^__version__ = "(\d+)\.(\d+)\.(\d+)"$', re.MULTILINE)
LIBRARY_VERSION_FILE = Path("median-lambda", "src", "median_lambda", "_version.py")


def library_version(clone: Path) -> tuple[int, int, int]:
    found = LIBRARY_VERSION.search((clone / LIBRARY_VERSION_FILE).read_text(encoding="utf-8"))
    if found is None:
        raise ProofFailed(f"{LIBRARY_VERSION_FILE} holds no X.Y.Z version")
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


A_LATER_LINE = "# A later release's line, which make upgrade brings into every project.\n"
A_FORKS_LINE = "# A fork's own release's line, which make upgrade SOURCE=<the fork> brings.\n"


def make_release(clone: Path, tag: str, template_line: str = "") -> None:
    """A release in `clone`, as `make release` makes one: median-lambda's version set to it, one commit, its tag;
    `template_line` appended to template.yaml (a change of the template's every project takes)."""
    if template_line:
        with (clone / "template.yaml").open("a", encoding="utf-8") as template:
            template.write(template_line)
    version_file = clone / LIBRARY_VERSION_FILE
    version_file.write_text(
        LIBRARY_VERSION.sub(f'__version__ = "{tag[1:]}"', version_file.read_text(encoding="utf-8")), encoding="utf-8"
    )
    # A commit of its own even with nothing else changed: a checkout that is itself a release (HEAD tagged) would
    # otherwise copy as that one.
    git(clone, "commit", "--quiet", "--allow-empty", "-am", f"Release {tag[1:]}, for the proof")
    git(clone, "tag", "--annotate", tag, "--message", f"Release {tag[1:]}, for the proof")


def later_releases(clone: Path, count: int) -> list[str]:
    """`count` release tags after median-lambda's version here, which no release of this repository has taken."""
    major, minor, patch = library_version(clone)
    return [f"v{major}.{minor}.{patch + step}" for step in range(1, count + 1)]


def locked_library(project: Path) -> str:
    """The median-lambda version the project's uv.lock pins, and where from."""
    found = re.search(
        r'name = "median-lambda"\nversion = "([^"]+)"\nsource = \{ (?:git|registry) = "([^"?#]+)',
        (project / "uv.lock").read_text(encoding="utf-8"),
    )
    return f"{found[1]} from {found[2]}" if found else "nowhere"


def prove_the_next_upgrade(clone: Path, scratch: Path) -> None:
    """This version's own `make upgrade` (median upgrade), which the previous release's never runs: a project of
    this version, worked in as a user, takes a later release (made here, in the clone: a line of template.yaml and
    the library's version) with the library and the template's files together; then says there is nothing newer;
    then takes a fork's own release with `make upgrade SOURCE=<the fork>`, the library and every link from there."""
    this, later, forked = later_releases(clone, 3)
    make_release(clone, this)
    step(f"copy this version (tagged {this} in the clone) and work in it as a user")
    project = scratch / "next"
    copy(clone, project, this, {})
    act_as_a_user(project, this)
    users = files_under(project, USERS_OWN)
    step(f"a later release, {later}: a line of template.yaml and median-lambda's version")
    make_release(clone, later, A_LATER_LINE)
    step(f"make upgrade: {this} -> the newest release, {later}")
    make(project, "upgrade")
    problems = [f"{name}: changed by the upgrade" for name, content in users.items()
                if files_under(project, USERS_OWN).get(name) != content]  # fmt: skip
    if not (project / "template.yaml").read_text(encoding="utf-8").endswith(A_LATER_LINE):
        problems.append(f"template.yaml lacks {later}'s line")
    if f'tag = "{later}"' not in (project / "pyproject.toml").read_text(encoding="utf-8"):
        problems.append(f"pyproject.toml does not take median-lambda from {later}")
    if locked_library(project) != f"{later[1:]} from file://{clone}":
        problems.append(f"uv.lock locks median-lambda {locked_library(project)}, not {later[1:]} from {clone}")
    if problems:
        raise ProofFailed(f"make upgrade to {later} is not what a user must get:\n  " + "\n  ".join(problems))
    git(project, "add", "-A")
    git(project, "commit", "--quiet", "-m", f"make upgrade to {later}")
    said = run(["make", "--no-print-directory", "upgrade"], project, capture_output=True)
    if "nothing to upgrade" not in said:
        raise ProofFailed(f"make upgrade on the newest release did not say there was nothing to do: {said[-500:]}")

    step(f"a fork of the template, with a release of its own, {forked}; make upgrade SOURCE=<the fork>")
    fork = scratch / "fork"
    run(["git", "clone", "--quiet", "--no-local", str(clone), str(fork)], scratch)
    git(fork, "config", "user.email", "fork@example.invalid")
    git(fork, "config", "user.name", "a fork")
    make_release(fork, forked, A_FORKS_LINE)
    make(project, "upgrade", f"SOURCE={fork}")
    readme = (project / "README.md").read_text(encoding="utf-8")
    problems = [f"{name}: changed by the upgrade" for name, content in users.items()
                if files_under(project, USERS_OWN).get(name) != content]  # fmt: skip
    if not (project / "template.yaml").read_text(encoding="utf-8").endswith(A_FORKS_LINE):
        problems.append(f"template.yaml lacks {forked}'s line")
    if f'git = "file://{fork}", tag = "{forked}"' not in (project / "pyproject.toml").read_text(encoding="utf-8"):
        problems.append(f"pyproject.toml does not take median-lambda from the fork's {forked}")
    if str(clone) in readme or f"file://{fork}/docs/upgrading.md" not in readme:
        problems.append("README.md's links do not all name the fork")
    if locked_library(project) != f"{forked[1:]} from file://{fork}":
        problems.append(f"uv.lock locks median-lambda {locked_library(project)}, not {forked[1:]} from the fork")
    if problems:
        raise ProofFailed("make upgrade SOURCE=<a fork> is not what a user must get:\n  " + "\n  ".join(problems))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m maintainers.template_proof", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder, to look into it")
    arguments = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="median-template-proof."))
    try:
        prove(scratch)
    except ProofFailed as failed:
        print(f"template-proof: FAILED: {failed}", file=sys.stderr)
        return 1
    finally:
        if arguments.keep:
            print(f"template-proof: the folder is kept in {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
