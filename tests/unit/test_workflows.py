""".github/workflows/: the wiring a user switches on and relies on, beyond what the linters check.

check-jsonschema and zizmor (make lint-workflows) check the syntax and the audits; these check
that the pieces fit: what a pull request runs, the order of the stages, that production needs
its environment, that the stages exist in samconfig.toml, and that every action is pinned to
a commit with its version beside it.
"""

from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from median_lambda.project.sam_config import SAMCONFIG, TEMPLATE, deploy_config, load_template, parameter_overrides

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<action>[\w.-]+/[\w./-]+)@(?P<ref>\S+)\s+#\s*(?P<version>v\d[\w.]*)\s*$")
COMMIT = re.compile(r"[0-9a-f]{40}")
REQUIRED_PR_TARGETS = ["lint", "test", "check", "validate", "build"]
# The pipeline's own; a workflow you add is held to the pinning rule only.
PIPELINE = ["checks.yml", "deploy.yml", "deploy-stage.yml"]


@cache
def workflow(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True.
    document["on"] = document.pop(True, document.get("on"))
    return document  # type: ignore[no-any-return]


def steps(name: str, job: str) -> list[dict[str, Any]]:
    return workflow(name)["jobs"][job]["steps"]  # type: ignore[no-any-return]


def make_targets(name: str, job: str) -> list[str]:
    return [target for step in steps(name, job) for target in make_targets_of(step)]


def make_targets_of(step: dict[str, Any]) -> list[str]:
    targets = []
    for line in step.get("run", "").splitlines():
        words = shlex.split(line)
        if words[:1] == ["make"]:
            targets += [word for word in words[1:] if "=" not in word]
    return targets


def action_step(name: str, job: str, action: str) -> dict[str, Any]:
    [step] = [step for step in steps(name, job) if step.get("uses", "").startswith(f"{action}@")]
    return step


def all_workflows() -> list[str]:
    return sorted(path.name for path in WORKFLOWS.glob("*.yml"))


@pytest.mark.parametrize("name", all_workflows())
def test_every_action_is_pinned_to_a_commit_with_its_version_beside_it(name: str) -> None:
    # GIVEN each `uses:` line of the workflow
    lines = [line for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines() if "uses:" in line]
    for line in lines:
        if "uses: $/" in line:
            continue  # this repository's own reusable workflow, at this very commit
        # THEN it names a full commit SHA, and a comment says which release that commit is
        pinned = PINNED.match(line)
        assert pinned, f"{name}: {line.strip()!r} is not `owner/repo@<sha> # vX.Y.Z`"
        assert COMMIT.fullmatch(pinned["ref"]), f"{name}: {pinned['ref']} is not a full commit SHA"


@pytest.mark.parametrize("name", PIPELINE)
def test_the_token_has_no_rights_but_those_each_job_asks_for(name: str) -> None:
    # GIVEN the workflow
    document = workflow(name)
    # THEN the workflow grants nothing by default, each job asks only to read the code, and
    # only the jobs that deploy ask for an OIDC token; none may write to the repository
    assert document["permissions"] == {}
    for job_name, job in document["jobs"].items():
        permissions = job["permissions"]
        deploys = "deploy-stage.yml" in job.get("uses", "") or name == "deploy-stage.yml"
        expected = {"contents": "read", "id-token": "write"} if deploys else {"contents": "read"}
        assert permissions == expected, f"{name} {job_name}"


@pytest.mark.parametrize("name", PIPELINE)
def test_checkouts_leave_no_token_behind(name: str) -> None:
    for job_name, job in workflow(name)["jobs"].items():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, f"{name} {job_name}"


def test_a_pull_request_runs_make_lint_test_check_validate_build_on_the_lambda_python() -> None:
    # GIVEN the checks workflow
    checks = workflow("checks.yml")
    # THEN every pull request runs it, with nothing secret, on the runtime's Python, and it
    # runs each make target the README promises, in that order
    assert "pull_request" in checks["on"]
    assert "pull_request_target" not in checks["on"]
    targets = make_targets("checks.yml", "checks")
    assert [target for target in targets if target in REQUIRED_PR_TARGETS] == REQUIRED_PR_TARGETS
    assert "lint-workflows" in targets
    python_file = action_step("checks.yml", "checks", "actions/setup-python")["with"]["python-version-file"]
    python = (WORKFLOWS.parents[1] / python_file).read_text(encoding="utf-8").strip()
    assert f"python{python}" == load_template(TEMPLATE)["Globals"]["Function"]["Runtime"]
    assert "secrets." not in (WORKFLOWS / "checks.yml").read_text(encoding="utf-8")
    # AND the pinned SAM CLI is there before the tests, which must then run the first deploy's questions
    [tests] = [step for step in steps("checks.yml", "checks") if "test" in make_targets_of(step)]
    assert make_targets_of(tests).index("sam-cli") < make_targets_of(tests).index("test")
    assert tests["env"]["MEDIAN_SAM_CLI_TESTS"] == "required"


def test_main_deploys_staging_then_production_and_only_once_switched_on() -> None:
    # GIVEN the deploy workflow
    deploy = workflow("deploy.yml")
    jobs = deploy["jobs"]
    # THEN it runs on pushes to main, the checks first, staging after them and production after
    # staging; neither deploy runs before the repository variable AWS_REGION is set, nor off main
    assert deploy["on"]["push"] == {"branches": ["main"]}
    assert jobs["checks"]["uses"] == "$/.github/workflows/checks.yml"
    assert jobs["checks"]["with"]["upload-build"] == "${{ vars.AWS_REGION != '' && github.ref == 'refs/heads/main' }}"
    assert jobs["staging"]["needs"] == "checks"
    assert jobs["production"]["needs"] == "staging"
    for stage in ("staging", "production"):
        assert jobs[stage]["if"] == "vars.AWS_REGION != '' && github.ref == 'refs/heads/main'"
        assert jobs[stage]["uses"] == "$/.github/workflows/deploy-stage.yml"
        assert jobs[stage]["with"] == {"environment": stage, "config-env": stage}
    assert deploy["concurrency"]["cancel-in-progress"] is False, "a deploy is never cancelled half-way"


def test_each_stage_deploys_in_its_environment_with_its_samconfig_settings() -> None:
    # GIVEN the stage workflow and samconfig.toml
    job = workflow("deploy-stage.yml")["jobs"]["deploy"]
    # THEN the job runs in the GitHub environment it is given (so production's reviewers hold it),
    # and each stage deploy.yml names has its own stack in samconfig.toml
    assert job["environment"]["name"] == "${{ inputs.environment }}"
    assert job["env"]["CONFIG_ENV"] == "${{ inputs.config-env }}"
    stacks = set()
    for stage in ("staging", "production"):
        config = deploy_config(SAMCONFIG, stage)
        assert config["stack_name"], stage
        assert config["confirm_changeset"] is False and config["fail_on_empty_changeset"] is False
        stacks.add(config["stack_name"])
    assert len(stacks | {deploy_config(SAMCONFIG)["stack_name"]}) == 3, "staging, production and a laptop's are apart"


@pytest.mark.parametrize("stage", ["staging", "production"])
def test_a_stage_passes_only_parameters_the_template_takes(stage: str) -> None:
    # GIVEN the one build the checks make (for the architecture the template writes) and a stage's settings
    overrides = parameter_overrides(deploy_config(SAMCONFIG, stage))
    # THEN each value the stage passes is for one of the template's Parameters, which sam deploy
    # passes on, and none is for what the template writes out (the architecture the build was
    # made for among them), which sam deploy would drop without a word
    assert set(overrides) <= set(load_template(TEMPLATE)["Parameters"]), stage
    # AND each stage names its own stage, secret and permissions boundary
    assert {"Stage", "MedianKeySecretName", "PermissionsBoundaryPolicy"} <= set(overrides), stage


def test_the_deploy_authenticates_by_oidc_for_a_role_and_deploys_through_cloudformations_role() -> None:
    # GIVEN the stage's deploy job
    credentials = action_step("deploy-stage.yml", "deploy", "aws-actions/configure-aws-credentials")["with"]
    [deploy] = [step["run"] for step in steps("deploy-stage.yml", "deploy") if step.get("name") == "sam deploy"]
    words = shlex.split(deploy)
    # THEN it trades the OIDC token for the environment's role, with no long-lived key anywhere,
    # and sam deploy runs unattended, as the execution role, with the stage's settings
    assert credentials["role-to-assume"] == "${{ vars.AWS_DEPLOY_ROLE_ARN }}"
    assert credentials["aws-region"] == "${{ vars.AWS_REGION }}"
    for name in PIPELINE:
        text = (WORKFLOWS / name).read_text(encoding="utf-8")
        assert "aws-access-key-id" not in text and "AWS_SECRET_ACCESS_KEY" not in text, name
    assert words[:2] == [".venv/sam-cli/bin/sam", "deploy"]
    for flag in ("--config-env", "--role-arn", "--s3-bucket", "--region"):
        assert flag in words
    assert {"--no-confirm-changeset", "--no-fail-on-empty-changeset"} <= set(words)
    assert "--guided" not in words
    # The build deployed is the one the checks uploaded, not one made here, with the SAM CLI that built
    # it: the one make installs from tooling/sam-cli.txt, not another from an action or an installer.
    runs = [step.get("run", "") for step in steps("deploy-stage.yml", "deploy")]
    assert not any("sam build" in run for run in runs)
    assert make_targets("deploy-stage.yml", "deploy") == ["install", "sam-cli"]
    assert not [step for step in steps("deploy-stage.yml", "deploy") if "setup-sam" in step.get("uses", "")]
    assert not [run for run in runs if re.search(r"(^|[\s;&|($])sam\s", run)], "a `sam` from PATH, not .venv/sam-cli's"
    assert sum(".venv/sam-cli/bin/sam " in run for run in runs) == 2  # sam deploy, sam list stack-outputs
    assert action_step("deploy-stage.yml", "deploy", "actions/download-artifact")["with"]["name"] == "sam-build"
    upload = action_step("checks.yml", "checks", "actions/upload-artifact")
    assert upload["with"]["name"] == "sam-build" and upload["if"] == "inputs.upload-build"


def test_the_smoke_check_runs_from_the_projects_venv_on_the_stacks_outputs() -> None:
    # GIVEN the stage's deploy job
    [smoke] = [step for step in steps("deploy-stage.yml", "deploy") if step.get("id") == "smoke"]
    installed = [
        index for index, step in enumerate(steps("deploy-stage.yml", "deploy")) if "install" in make_targets_of(step)
    ]
    # THEN it runs median's smoke check, from the venv `make install` made before it, on the stack's outputs
    assert installed and installed[0] < steps("deploy-stage.yml", "deploy").index(smoke)
    assert ".venv/bin/median smoke-check --stack-outputs stack-outputs.json" in smoke["run"]
    assert smoke["env"]["MEDIAN_KEY"] == "${{ secrets.MEDIAN_KEY }}"


def test_ci_runs_make_targets_and_median_commands_never_a_modules_path() -> None:
    # GIVEN every workflow and .ci/run
    scripts = {path.name: path.read_text(encoding="utf-8") for path in WORKFLOWS.glob("*.yml")}
    scripts[".ci/run"] = (WORKFLOWS.parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    # THEN none runs a module of median-lambda by its path, which a new version may move: the library's
    # commands are `median`'s, as a user runs them
    for name, text in scripts.items():
        assert not re.search(r"python3? -m median_lambda", text), name


def test_the_weekly_mutation_run_measures_every_guarding_module_and_keeps_its_table() -> None:
    # GIVEN the mutation workflow
    document = workflow("mutation.yml")
    # THEN it runs weekly (and on demand), with no rights but reading the code, no token left behind,
    # runs `make mutate` for every module, and uploads the table even when a module is below the bar
    assert set(document["on"]) == {"schedule", "workflow_dispatch"}
    assert document["permissions"] == {}
    assert document["jobs"]["mutate"]["permissions"] == {"contents": "read"}
    assert action_step("mutation.yml", "mutate", "actions/checkout")["with"]["persist-credentials"] is False
    assert make_targets("mutation.yml", "mutate") == ["mutate"]
    upload = action_step("mutation.yml", "mutate", "actions/upload-artifact")
    assert upload["if"] == "always()"
    assert upload["with"]["path"] == ".mutmut/table.md"


def test_every_pull_request_audits_the_lock_in_a_job_of_its_own() -> None:
    # GIVEN the checks workflow
    # THEN a job of its own runs `make audit` (uv's audit of uv.lock), on the runtime's Python,
    # read-only, and .ci/run does not: no advisory source is reachable from its machines
    assert make_targets("checks.yml", "audit") == ["audit"]
    assert workflow("checks.yml")["jobs"]["audit"]["permissions"] == {"contents": "read"}
    ci_run = (WORKFLOWS.parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert not re.search(r"^\s*make\b.*\baudit\b", ci_run, re.MULTILINE)


def test_dependabot_proposes_lock_updates_on_the_actions_weekly_cooled_down_rhythm() -> None:
    # GIVEN Dependabot's settings
    dependabot = yaml.safe_load((WORKFLOWS.parent / "dependabot.yml").read_text(encoding="utf-8"))
    updates = {update["package-ecosystem"]: update for update in dependabot["updates"]}
    # THEN uv.lock is watched at the repository's root, on the same schedule and cooldown as the actions
    assert updates["uv"]["directory"] == "/"
    for setting in ("schedule", "cooldown"):
        assert updates["uv"][setting] == updates["github-actions"][setting]
    assert updates["uv"]["schedule"]["interval"] == "weekly"
    assert updates["uv"]["cooldown"]["default-days"] >= 7


@pytest.mark.parametrize("name", ["checks.yml", "deploy-stage.yml"])
def test_every_python_a_projects_workflows_set_up_is_python_version_s(name: str) -> None:
    # GIVEN a workflow a project runs
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    # THEN each Python it sets up is the one .python-version names, so that moving the function to another
    # Lambda runtime changes no workflow (docs/upgrading.md)
    assert text.count("actions/setup-python@") == text.count("python-version-file: .python-version") > 0
    assert "python-version:" not in text
