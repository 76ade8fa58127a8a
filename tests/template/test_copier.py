"""The repository as a Copier template: what `copier copy` writes, with the default answers and with others.

Each `X.jinja` twin renders to the repository's own `X` at the default answers, so the template
repository runs as the project it makes; other answers change only what they name. Rendered
from this working tree (`--vcs-ref HEAD` takes its uncommitted changes too), with the pinned
Copier (median-lambda's tooling/copier.py) that `make upgrade` runs. The tasks (median_lambda.project's
architecture and examples) have tests of their own; `make template-proof` runs everything
end to end on real projects.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from median_lambda.project.deploy_names import RESERVED_JOBS, YAML_NON_STRINGS, longest_stack_name
from median_lambda.project.sam_config import load_template

from maintainers.template_proof import template_clone
from tests.template.copier_runs import Terminal

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
COPIER = ROOT / ".venv" / "copier" / "bin" / "copier"
# A project's own files, which differ from the repository's on purpose: the repository's README is its front
# door (the library, the template, the example), a project's is README.md.jinja's (test_generated_project.py).
NOT_TWINS = {"README.md.jinja"}
# The checkout's own files, as git sees them: never a venv's, nor a copy make mutate or a test made.
_FILES = subprocess.run(
    ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "*.jinja"],  # noqa: S607
    cwd=ROOT, capture_output=True, text=True, check=True,
).stdout.split("\0")  # fmt: skip
TWINS = sorted(ROOT / name for name in filter(None, _FILES) if "{{" not in name and Path(name).name not in NOT_TWINS)
# What the repository's own file holds that a project's has not: the blocks between these lines (the
# library's workspace, its maintainers' dependencies), in pyproject.toml.
TEMPLATE_REPOSITORYS_OWN = re.compile(r"^# >>> template repository.*?^# <<< template repository\n", re.M | re.S)
# ... and what a project's holds that the repository's has not: where it takes median-lambda from.
PROJECTS_OWN = re.compile(
    r"^# median-lambda from the template's repository.*?^\[tool\.uv\.sources\]\n.*?\n\n", re.M | re.S
)
OTHER_ANSWERS = {"stack_name": "acme-returns", "region": "eu-west-1", "stages": "[dev, qa, prod]"}


def render(destination: Path, *answers: str, tasks: bool = False) -> subprocess.CompletedProcess[str]:
    data = [item for answer in answers for item in ("--data", answer)]
    return subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", "HEAD",
         *([] if tasks else ["--skip-tasks"]), *data, str(ROOT), str(destination)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def defaults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    destination = tmp_path_factory.mktemp("defaults") / "project"
    rendered = render(destination)
    assert rendered.returncode == 0, rendered.stderr
    yield destination


@pytest.fixture(scope="module")
def others(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    destination = tmp_path_factory.mktemp("others") / "project"
    rendered = render(destination, *(f"{name}={value}" for name, value in OTHER_ANSWERS.items()))
    assert rendered.returncode == 0, rendered.stderr
    yield destination


def test_there_are_twins_to_hold() -> None:
    # GIVEN the template's twins: a file Copier renders beside the repository's own
    # THEN each has its plain file, which is what this repository runs as
    assert {str(twin.relative_to(ROOT)) for twin in TWINS} >= {
        "samconfig.toml.jinja",
        "tools/settings.toml.jinja",
        ".github/workflows/deploy.yml.jinja",
    }
    assert all(twin.with_suffix("").is_file() for twin in TWINS)


@pytest.mark.parametrize("twin", TWINS, ids=lambda twin: str(twin.relative_to(ROOT)))
def test_each_twin_renders_the_repositorys_own_file_at_the_default_answers(defaults: Path, twin: Path) -> None:
    # GIVEN a project copied with every default answer
    plain = twin.with_suffix("")
    rendered, own = (defaults / plain.relative_to(ROOT)).read_text(encoding="utf-8"), plain.read_text(encoding="utf-8")

    # THEN the twin's rendering is the repository's own file, but for what each holds of its own: a change to one
    # is made to both
    def held(text: str, own_part: re.Pattern[str]) -> str:
        return re.sub(r"\n{3,}", "\n\n", own_part.sub("", text))

    assert held(rendered, PROJECTS_OWN) == held(own, TEMPLATE_REPOSITORYS_OWN), (
        f"{twin.relative_to(ROOT)} and {plain.relative_to(ROOT)} differ at the default answers: change both alike"
    )


def test_a_project_holds_none_of_the_maintainers_tools(defaults: Path) -> None:
    # GIVEN a project copied with every default answer
    present = {str(path.relative_to(defaults)) for path in defaults.rglob("*")}
    # THEN the template's own tools, suites and CI stayed behind, and the project's answers are kept for updates
    maintainers = ("bench", "maintainer.mk", "tests/unit", "tests/integration", "tests/browser", ".ci", "LICENSE")
    maintainers += ("maintainers/mutate.py", "maintainers/tooling/mutmut.py", ".github/workflows/mutation.yml")
    assert not present & set(maintainers)
    assert not any(name.endswith(".jinja") for name in present)
    answers = yaml.safe_load((defaults / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["stack_name"] == "median-tools" and answers["stages"] == ["staging", "production"]


def test_other_answers_name_the_stacks_stages_and_secrets(others: Path) -> None:
    # GIVEN a project copied with its own stack name, region and three stages
    samconfig = tomllib.loads((others / "samconfig.toml").read_text(encoding="utf-8"))
    workflow = yaml.safe_load((others / ".github/workflows/deploy.yml").read_text(encoding="utf-8"))
    settings = tomllib.loads((others / "tools/settings.toml").read_text(encoding="utf-8"))
    # THEN `make deploy` deploys its stack to its region, and each stage has its stack, secret and Stage=
    assert samconfig["default"]["global"]["parameters"]["stack_name"] == "acme-returns"
    assert samconfig["default"]["global"]["parameters"]["region"] == "eu-west-1"
    for stage in ("dev", "qa", "prod"):
        assert samconfig[stage]["global"]["parameters"]["stack_name"] == f"acme-returns-{stage}"
        overrides = samconfig[stage]["deploy"]["parameters"]["parameter_overrides"]
        assert f'MedianKeySecretName="acme-returns-{stage}/median-key"' in overrides
        assert f"Stage={stage}" in overrides
    # AND the last stage, production's place, takes a new version on a canary; those before it at once
    overrides = {
        stage: samconfig[stage]["deploy"]["parameters"]["parameter_overrides"] for stage in ("dev", "qa", "prod")
    }
    assert [stage for stage, values in overrides.items() if "DeploymentType=Canary10Percent10Minutes" in values] == [
        "prod"
    ]
    # AND the pipeline deploys them in order, each after the one before
    jobs = workflow["jobs"]
    assert [jobs[stage]["needs"] for stage in ("dev", "qa", "prod")] == ["checks", "dev", "qa"]
    assert [jobs[stage]["with"]["config-env"] for stage in ("dev", "qa", "prod")] == ["dev", "qa", "prod"]
    # AND the examples' settings name a table for every stage, with secrets the stage's stack may read
    assert set(settings) == {"default", "dev", "qa", "prod"}
    assert settings["prod"]["PICKUP_API_TOKEN_SECRET"] == "acme-returns-prod/pickup-api-token"


def refusal(rendered: subprocess.CompletedProcess[str]) -> str:
    """The one line Copier stopped with, refusing an answer given with --data (copier-rules.j2's `given`)."""
    assert rendered.returncode != 0, "copier copy accepted it"
    assert "Traceback" not in rendered.stderr, rendered.stderr
    [line] = [line for line in rendered.stderr.splitlines() if line.startswith("'None' has no attribute ")]
    return line


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ("stack_name=Acme", "stack_name: lowercase letters, digits and -"),
        ("stack_name=shopco-support-tools", "stack_name: at most 15 characters with the stage production: "),
        ("region=Europe", "region: an AWS region"),
        ("stages=[dev, dev]", "stages: each stage once"),
        ("stages=[default]", 'not "default"'),
        ("stages=staging", "stages: a list"),
        ("architecture=sparc", 'architecture: "sparc": one of arm64, x86_64'),
    ],
)
def test_a_wrong_answer_is_refused_in_one_line_with_what_is_expected(tmp_path: Path, answer: str, refused: str) -> None:
    # WHEN a project is copied with one answer that cannot work, given with --data
    rendered = render(tmp_path / "project", answer)
    # THEN Copier refuses it in one line, no traceback, saying what it expects, and writes nothing
    assert refused in refusal(rendered)
    assert not (tmp_path / "project").exists()


def test_a_stack_name_is_held_to_the_longest_of_its_stages(tmp_path: Path) -> None:
    # GIVEN a stack name of 20 characters
    stack = "shopco-support-tools"
    # WHEN a project is copied with it and the default stages, with stages of 5 characters at most, and with one of 6
    default_stages = render(tmp_path / "default", f"stack_name={stack}")
    short_stages = render(tmp_path / "short", f"stack_name={stack}", "stages=[dev, qa, prod]")
    one_longer = render(tmp_path / "longer", f"stack_name={stack}", "stages=[dev, canary, prod]")
    # THEN it is refused with the default stages, saying the limit the longest of them sets, and the stack it would make
    assert refusal(default_stages) == (
        "'None' has no attribute \"stack_name: at most 15 characters with the stage production: its stack, "
        "shopco-support-tools-production, would be 31, and a stage's stack is at most 26 "
        "(<stack>-MedianToolsFunctionRole-<13 characters> is an IAM role's name, at most 64)\""
    )
    # AND copied with stages its stacks fit
    assert short_stages.returncode == 0, short_stages.stderr
    samconfig = tomllib.loads((tmp_path / "short" / "samconfig.toml").read_text(encoding="utf-8"))
    assert samconfig["prod"]["global"]["parameters"]["stack_name"] == "shopco-support-tools-prod"
    # AND refused again with one stage a character too long, naming it
    refused = (
        "stack_name: at most 19 characters with the stage canary: its stack, shopco-support-tools-canary, would be 27"
    )
    assert refused in refusal(one_longer)


def test_the_stack_names_default_fits_the_longest_stage(tmp_path: Path) -> None:
    # WHEN a project is copied with a stage of 16 characters, the longest a stage may be, and the default stack name
    rendered = render(tmp_path / "project", "stages=[staging, sixteen-letters]")
    # THEN the default is one whose stage stacks fit (median-tools-sixteen-letters would be 29 characters)
    assert rendered.returncode == 0, rendered.stderr
    answers = yaml.safe_load((tmp_path / "project" / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["stack_name"] == "median"


def test_at_the_prompt_a_wrong_answer_is_asked_again_saying_why(tmp_path: Path) -> None:
    # GIVEN copier copy on a terminal, as a user runs it
    command = [
        str(COPIER),
        "copy",
        "--trust",
        "--skip-tasks",
        "--vcs-ref",
        "HEAD",
        str(ROOT),
        str(tmp_path / "project"),
    ]
    with Terminal(command, tmp_path) as terminal:
        clear = "\x15"  # the line's default answer, deleted before the user's
        # WHEN the user answers each stage twice, then the stages
        terminal.expect("The pipeline's stages")
        terminal.send(f"{clear}[staging, staging]\r")
        # THEN the question is asked again, saying why
        terminal.expect("Validation error for question 'stages': each stage once")
        terminal.send(f"{clear}[staging, production]\r")
        # AND WHEN the user answers a stack name too long for the stage production
        terminal.expect("The CloudFormation stack's name")
        terminal.send(f"{clear}shopco-support-tools\r")
        # THEN it is asked again, saying the limit the stage sets
        terminal.expect("Validation error for question 'stack_name': at most 15 characters with the stage production")
        # AND a name that fits is taken, the other questions at their defaults, and the project copied: no traceback
        terminal.send(f"{clear}shopco-support\r")
        for question in ("The AWS region", "instruction set", "Keep the example tools", "package index"):
            terminal.expect(question)
            terminal.send("\r")
        assert terminal.finish() == 0, terminal.shown
        assert "Traceback" not in terminal.shown
    samconfig = tomllib.loads((tmp_path / "project" / "samconfig.toml").read_text(encoding="utf-8"))
    assert samconfig["production"]["global"]["parameters"]["stack_name"] == "shopco-support-production"


def test_the_reserved_stage_names_are_the_rendered_workflows_own_jobs(defaults: Path) -> None:
    # GIVEN the deploy workflow a project gets, and its stages
    workflow = yaml.safe_load((defaults / ".github/workflows/deploy.yml").read_text(encoding="utf-8"))
    answers = yaml.safe_load((defaults / ".copier-answers.yml").read_text(encoding="utf-8"))
    # THEN its jobs are one per stage and the reserved ones, which the validator refuses (below)
    assert set(workflow["jobs"]) - set(answers["stages"]) == set(RESERVED_JOBS)


def test_every_reserved_job_name_is_refused_as_a_stage(tmp_path: Path) -> None:
    # WHEN a project is copied with stages named as the deploy workflow's own jobs
    rendered = render(tmp_path / "project", f"stages=[{', '.join(RESERVED_JOBS)}, production]")
    # THEN Copier refuses each, saying why
    line = refusal(rendered)
    for name in RESERVED_JOBS:
        assert f"{name}: the deploy workflow's own job, which a stage's would repeat." in line
    assert not (tmp_path / "project" / "template.yaml").exists()


def test_every_word_yaml_reads_as_no_name_is_refused_as_a_stage_quoted_or_not(tmp_path: Path) -> None:
    # WHEN a project is copied with stages named as YAML spells its booleans and null, quoted (strings to
    # Copier, but bare words in the workflow it writes) and not
    quoted = ", ".join(f'"{word}"' for word in YAML_NON_STRINGS)
    rendered = render(tmp_path / "quoted", f"stages=[{quoted}]")
    bare = render(tmp_path / "bare", "stages=[null, true, off]")
    # THEN Copier refuses every one, saying YAML reads no name there
    line = refusal(rendered)
    for word in YAML_NON_STRINGS:
        assert f"{word}: YAML reads it as " in line, word
    assert line.count("not as a name") == len(YAML_NON_STRINGS)
    assert refusal(bare).count("not as a name") == 3


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ("stack_name=median-tools\n", "stack_name: lowercase letters, digits and -"),
        ("region=eu-west-1\n", "region: an AWS region"),
        # YAML's escape, as the line shows it
        ('stages=["staging\\n"]', 'stages: "staging\\\\n": 1 to 16 lowercase letters'),
    ],
    ids=["stack_name", "region", "stage"],
)
def test_a_name_with_a_trailing_newline_is_refused(tmp_path: Path, answer: str, refused: str) -> None:
    # WHEN a project is copied with an answer that fits its rule but for a trailing newline (which `$` matches before)
    rendered = render(tmp_path / "project", answer)
    # THEN Copier refuses it: samconfig.toml would not parse
    assert refused in refusal(rendered)


def test_the_longest_stage_stack_is_accepted_and_one_character_more_refused(tmp_path: Path) -> None:
    # GIVEN the longest stage stack the pipeline's roles allow, as make check works it out
    longest = longest_stack_name(load_template(ROOT / "pipeline" / "oidc-role.yaml")).length
    stage = "s" * (longest - len("median-tools-"))
    # WHEN a project is copied with a stage that long, and one with a stage one character longer
    fits = render(tmp_path / "fits", f"stages=[{stage}]", "stack_name=median-tools")
    over = render(tmp_path / "over", f"stages=[{stage}s]", "stack_name=median-tools")
    # THEN the first is copied, with the stage's stack at that length
    assert fits.returncode == 0, fits.stderr
    samconfig = tomllib.loads((tmp_path / "fits" / "samconfig.toml").read_text(encoding="utf-8"))
    assert len(samconfig[stage]["global"]["parameters"]["stack_name"]) == longest
    # AND the second is refused, naming the stack and the role whose name would be cut
    assert f"its stack, median-tools-{stage}s, would be {longest + 1}, and a stage's stack is at most {longest}" in (
        refusal(over)
    )
    assert "<stack>-MedianToolsFunctionRole-<13 characters> is an IAM role's name, at most 64" in refusal(over)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this template whose HEAD is the release v9.9.9."""
    clone = template_clone(tmp_path_factory.mktemp("released"))
    # A commit of its own, so no release this checkout already tagged (HEAD is one on a release) names it
    subprocess.run(["git", "commit", "--quiet", "--allow-empty", "-m", "Release 9.9.9"], cwd=clone, check=True)  # noqa: S607
    subprocess.run(["git", "tag", "-a", "v9.9.9", "-m", "v9.9.9"], cwd=clone, check=True)  # noqa: S607
    return clone


@pytest.mark.parametrize(
    ("answer", "source"), [("false", 'tag = "v9.9.9", subdirectory = "median-lambda"'), ("true", None)]
)
def test_a_project_takes_median_lambda_from_the_release_it_copied_by_git_tag_or_from_an_index(
    released: Path, tmp_path: Path, answer: str, source: str | None
) -> None:
    # GIVEN a release of the template
    # WHEN a project is copied from it, answering whether median-lambda comes from a package index
    project = tmp_path / "project"
    rendered = subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--skip-tasks", "--vcs-ref", "v9.9.9",
         "--data", f"library_from_index={answer}", str(released), str(project)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    # THEN it asks for median-lambda within its major version, which the lock fixes at a release
    assert "median-lambda[tracing]>=3.0,<4" in pyproject["project"]["dependencies"]
    # AND names the git source only when it takes the library from git; from an index, the release copied, exactly
    # (its template files are that release's: the lock, `make lock` included, takes no later one)
    sources = pyproject["tool"]["uv"].get("sources", {})
    constraints = pyproject["tool"]["uv"].get("constraint-dependencies", [])
    if source is None:
        assert "median-lambda" not in sources
        assert constraints == ["median-lambda==9.9.9"]
    else:
        assert source in (project / "pyproject.toml").read_text(encoding="utf-8")
        assert sources["median-lambda"]["git"] == f"file://{released}"
        assert constraints == []
    # AND the answer is kept, so each later upgrade takes the library from the same place
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text(encoding="utf-8"))
    assert answers["library_from_index"] is (answer == "true")


def test_a_project_copied_over_ssh_takes_median_lambda_over_ssh_and_links_its_guides_on_the_web(
    released: Path, tmp_path: Path
) -> None:
    # GIVEN the release as a company's fork is usually reached, git@github.com:acme/median-template.git (which git's
    # insteadOf sends to the clone here)
    address = "git@github.com:acme/median-template.git"
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{released.as_uri()}"]\n\tinsteadOf = {address}\n', encoding="utf-8")
    environment = {**os.environ, "GIT_CONFIG_GLOBAL": str(config)}
    # WHEN a project is copied from it
    project = tmp_path / "project"
    rendered = subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--skip-tasks", "--vcs-ref", "v9.9.9",
         address, str(project)],
        capture_output=True, text=True, check=False, env=environment,
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    # THEN uv takes median-lambda over ssh, in the URL form it reads (the scp-like one is "a relative URL" to it)
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["uv"]["sources"]["median-lambda"] == {
        "git": "ssh://git@github.com/acme/median-template",
        "tag": "v9.9.9",
        "subdirectory": "median-lambda",
    }
    # AND the README links the guides of that release on GitHub's web pages
    readme = (project / "README.md").read_text(encoding="utf-8")
    assert "(https://github.com/acme/median-template/blob/v9.9.9/docs/upgrading.md)" in readme
    assert "ssh://" not in readme
    # AND every job of its GitHub workflows that installs the project first gives git the deploy key the guide names,
    # which the deploy passes to the checks and each stage it calls
    workflows = project / ".github" / "workflows"
    checks, stage, deploy = (
        yaml.safe_load((workflows / name).read_text(encoding="utf-8"))
        for name in ("checks.yml", "deploy-stage.yml", "deploy.yml")
    )
    for document, job in ((checks, "checks"), (checks, "sam-local"), (checks, "audit"), (stage, "deploy")):
        names = [step.get("name", "") for step in document["jobs"][job]["steps"]]
        key = names.index("Give git the deploy key of median-lambda's repository")
        assert key < next(index for index, name in enumerate(names) if name.startswith(("make", "Install", "Audit")))
        [step] = [step for step in document["jobs"][job]["steps"] if step.get("name", "").startswith("Give git")]
        assert step["env"]["LIBRARY_SSH_KEY"] == "${{ secrets.MEDIAN_LIBRARY_SSH_KEY }}"
        assert "github-pipeline.md" in step["run"]
    for document in (checks, stage):
        assert document[True]["workflow_call"]["secrets"]["MEDIAN_LIBRARY_SSH_KEY"]["required"] is False
    callers = [job for job in deploy["jobs"].values() if "uses" in job]
    assert all(job["secrets"] == {"MEDIAN_LIBRARY_SSH_KEY": "${{ secrets.MEDIAN_LIBRARY_SSH_KEY }}"} for job in callers)
    # AND GitHub's schemas and zizmor's audits pass them, as make lint-workflows runs them
    linted = subprocess.run(  # noqa: S603 - the median command of this venv, on the project copied
        [str(ROOT / ".venv" / "bin" / "median"), "lint-workflows"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_a_project_copied_from_https_installs_with_no_key_in_its_workflows(defaults: Path) -> None:
    # GIVEN a project copied from a repository reached over HTTPS (or a folder), as the defaults are
    workflows = (defaults / ".github" / "workflows").glob("*.yml")
    # THEN its workflows name no deploy key: it has none to set
    assert not [path.name for path in workflows if "MEDIAN_LIBRARY_SSH_KEY" in path.read_text(encoding="utf-8")]


def test_a_copy_from_a_relative_path_is_refused_saying_what_works(released: Path, tmp_path: Path) -> None:
    # GIVEN the template named by a path relative to where copier runs
    # WHEN a project is copied from it (its tasks run, as a user's copy does)
    copied = subprocess.run(  # noqa: S603 - the pinned copier, with arguments of our own
        [str(COPIER), "copy", "--trust", "--defaults", "--quiet", "--vcs-ref", "v9.9.9",
         f"./{released.name}", str(tmp_path / "project")],
        cwd=released.parent, capture_output=True, text=True, check=False,
        env={**os.environ, "MEDIAN_RENDER_ONLY": "1"},
    )  # fmt: skip
    # THEN it is refused before anything is locked, saying why and what to give instead, and leaves no project
    assert copied.returncode != 0
    assert "copier copy was given the template by a relative path, which the project cannot find again" in (
        copied.stderr
    )
    assert 'Copy it from its absolute path (copier copy --trust "$(realpath <the path>)" <project>)' in copied.stderr
    assert not (tmp_path / "project").exists()


def test_the_projects_readme_says_whose_each_of_its_files_is(defaults: Path) -> None:
    # GIVEN the project's README, and every file and folder at the project's root
    readme = (defaults / "README.md").read_text(encoding="utf-8")
    start = readme.index("Whose file is whose")
    table = readme[start : readme.index("\n## ", start)]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    entries = sorted(path.name for path in defaults.iterdir())
    # THEN each is in a row saying whose it is and what make upgrade does with it (the README itself as "this README")
    named = {
        entry: [row for row in rows if f"`{entry}" in row or (entry == "README.md" and "this README" in row)]
        for entry in entries
    }
    assert [entry for entry, found in named.items() if not found] == []
    assert all(row.count(" | ") == 2 for row in rows)
