"""One alias for the API, the rollout, its PreTraffic hook and SnapStart; the extension's layer for the stack's region
and architecture.

A value written in the template (reserved concurrency, the architecture) is tested by editing its
line as the template's comment says (tests/template_edits.py); a stage's (SnapStart) by its parameter.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from median_lambda.build.sources import DEVELOPER_PARTS
from median_lambda.cli.template_check import (
    UNVERSIONED_PROPERTIES,
    VERSION_DESCRIPTION_LIMIT,
    Template,
    function_properties,
)
from median_lambda.project.sam_config import load_template, parameter_overrides
from median_lambda.protocol import KEY_CACHE_SECONDS
from median_lambda.runtime.observability import Metric
from median_lambda.testing import Stack, template_parameters, translated
from median_lambda.testing.template import REGION, REQUIRED_PARAMETERS

from tests.template_edits import edited, with_architecture

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = "MedianToolsFunction"
# The extension's own variables (AWS's names): its port, which is also the handler's switch, and its cache.
EXTENSION_PORT_ENV = "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT"
EXTENSION_TTL_ENV = "SECRETS_MANAGER_TTL"
# The line a user edits, as the template's comment says: a concurrency cap.
RESERVED_25 = ("      # ReservedConcurrentExecutions: 25\n", "      ReservedConcurrentExecutions: 25\n")
LAYER_ARN = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):lambda:(?P<region>[a-z0-9-]+):\d{12}:layer:"
    r"AWS-Parameters-and-Secrets-Lambda-Extension(?P<arm>-Arm64)?:\d+"
)


def function(stack: Stack) -> dict[str, Any]:
    return stack.properties(FUNCTION)


def variables(stack: Stack) -> dict[str, Any]:
    environment: dict[str, Any] = function(stack)["Environment"]["Variables"]
    return environment


def test_every_route_of_the_api_calls_the_alias(stack: Stack) -> None:
    # GIVEN the alias SAM publishes for the function, and the API it generates
    alias, _ = stack.one_of_type("AWS::Lambda::Alias")
    _, api = stack.one_of_type("AWS::ApiGatewayV2::Api")
    integrations = [
        operation["x-amazon-apigateway-integration"]
        for path in api["Properties"]["Body"]["paths"].values()
        for operation in path.values()
    ]
    # THEN each of its routes (GET, POST, ANY) invokes the alias, never $LATEST
    assert len(integrations) == 3
    for integration in integrations:
        assert f"/functions/${{{alias}}}/invocations" in integration["uri"]["Fn::Sub"]
    # AND API Gateway may invoke the alias, and only it
    permissions = stack.of_type("AWS::Lambda::Permission").values()
    assert {permission["Properties"]["FunctionName"]["Ref"] for permission in permissions} == {alias}


def test_the_alias_follows_each_published_version(stack: Stack) -> None:
    # GIVEN the alias and the version SAM publishes
    _, alias = stack.one_of_type("AWS::Lambda::Alias")
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    # THEN the alias points at that version, and CodeDeploy moves it there
    assert alias["Properties"]["FunctionVersion"] == {"Fn::GetAtt": [version, "Version"]}
    assert "CodeDeployLambdaAliasUpdate" in alias["UpdatePolicy"]


def versioned_parameters(template: dict[str, Any]) -> list[str]:
    """The parameters a published version keeps, read from the template: those its versioned properties refer to."""
    read = Template(template, known_values={})
    properties = function_properties(read, FUNCTION)
    kept = [read.parameters_in(value) for name, value in properties.items() if name not in UNVERSIONED_PROPERTIES]
    return sorted(set().union(*kept))


def another_value(name: str, spec: dict[str, Any]) -> str:
    """A value other than the default that the parameter's own constraints allow."""
    current = str(spec.get("Default", REQUIRED_PARAMETERS.get(name, "")))
    if "AllowedValues" in spec:
        return next(str(value) for value in spec["AllowedValues"] if str(value) != current)
    if spec.get("Type") == "Number":
        return str(spec["MaxValue"] if "MaxValue" in spec and str(spec["MaxValue"]) != current else int(current) + 1)
    for candidate in (f"{current}-2", f"{current}2", "none", "x"):
        fits = len(candidate) <= int(spec.get("MaxLength", len(candidate)))
        if candidate != current and fits and re.fullmatch(spec.get("AllowedPattern", ".*"), candidate):
            return candidate
    raise AssertionError(f"no other value of {name} fits its constraints")  # pragma: no cover


def a_new_version_is_published(before: Stack, after: Stack) -> bool:
    """Whether CloudFormation replaces the version SAM declares, so publishes the updated function anew."""
    (before_id, before_version), (after_id, after_version) = (
        each.one_of_type("AWS::Lambda::Version") for each in (before, after)
    )
    before_description = before.resolve(before_version["Properties"].get("Description"))
    after_description = after.resolve(after_version["Properties"].get("Description"))
    return (before_id, before_description) != (after_id, after_description)


def in_version_description(parameter: str) -> bool:
    read = Template(load_template(), known_values={})
    return parameter in read.parameters_in(function_properties(read, FUNCTION).get("VersionDescription"))


@pytest.mark.parametrize("parameter", versioned_parameters(load_template()))
def test_a_changed_parameter_alone_publishes_a_new_version(stack: Stack, parameter: str) -> None:
    # GIVEN the same code deployed again with one parameter the function's version keeps changed
    # (every such parameter the template has, read from it, so one a user adds is tested too)
    if not in_version_description(parameter):
        # A user's parameter that would leave `live` stale: make validate names it with the fix.
        pytest.skip(f"{parameter} is not in VersionDescription: run make validate (docs/configuration.md)")
    changed = translated(**{parameter: another_value(parameter, template_parameters()[parameter])})
    # WHEN CloudFormation compares the version SAM declares with the deployed one
    # THEN it differs in a property that replaces it (its logical id, or its description), so a new
    # version is published from the updated function and the alias moves to it
    assert a_new_version_is_published(stack, changed)
    # AND the description stays within Lambda's 256 characters
    (_, version) = changed.one_of_type("AWS::Lambda::Version")
    assert len(changed.resolve(version["Properties"]["Description"])) <= VERSION_DESCRIPTION_LIMIT


def test_changed_code_alone_publishes_a_new_version(stack: Stack) -> None:
    # GIVEN the same template deployed with another artifact: new code, or a changed tools/settings.toml,
    # which the build bundles, so sam deploy uploads it under another key (the zip's MD5)
    changed = translated(code_uri="s3://artifacts/another-md5.zip")
    # THEN a new version is published, however many settings changed, with no room needed in the template
    assert a_new_version_is_published(stack, changed)


def test_the_stage_reaches_the_function_and_each_pipeline_stage_names_its_own() -> None:
    # GIVEN a stack deployed for a stage
    stack = translated(Stage="staging")
    # THEN the function reads that stage's table of tools/settings.toml (MEDIAN_STAGE)
    assert variables(stack)["MEDIAN_STAGE"] == "staging"
    # AND samconfig.toml's staging and production config-envs each deploy as the stage of their name
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    for stage in ("staging", "production"):
        assert parameter_overrides(config[stage]["deploy"]["parameters"])["Stage"] == stage
    # AND `make deploy` (the default config-env) deploys the `default` stage, the template's default
    assert "Stage" not in parameter_overrides(config["default"]["deploy"]["parameters"])
    assert template_parameters()["Stage"]["Default"] == "default"


def rollback_alarms(stack: Stack) -> dict[str, str]:
    """The alarms the deployment group stops and rolls back on, by what each reads: its metric, or its expression."""
    _, group = stack.one_of_type("AWS::CodeDeploy::DeploymentGroup")
    configuration = group["Properties"]["AlarmConfiguration"]
    assert configuration["Enabled"] is True
    assert "DEPLOYMENT_STOP_ON_ALARM" in group["Properties"]["AutoRollbackConfiguration"]["Events"]
    watched = [alarm["Name"]["Ref"] for alarm in configuration["Alarms"]]
    assert all(stack.exists(name) for name in watched), watched  # an alarm CloudFormation does not create stops none
    read = {}
    for name in watched:
        alarm = stack.properties(name)
        read[name] = alarm.get("MetricName") or " ".join(
            each.get("Expression") or each["MetricStat"]["Metric"]["MetricName"] for each in alarm["Metrics"]
        )
    return read


def test_the_error_alarms_and_only_they_roll_a_version_back(stack: Stack) -> None:
    # GIVEN the deployment group that shifts the alias
    watched = rollback_alarms(stack)
    # THEN it stops and rolls back on the alarms that say the new code is broken: errors the function raised,
    # tools that crashed, and the version's 5XX answers over its invocations (every 5XX the handler answers)
    assert len(watched) == 3
    assert "Errors" in watched.values()
    assert any(f"SUM({Metric.TOOL_CRASHES})" in read for read in watched.values())
    assert any(read.startswith(f"{Metric.SERVER_ERRORS} Invocations ") for read in watched.values())
    # AND none that is about load or Median (latency, throttles, refused signatures), nor API Gateway's 5XX
    # rate, in which a canary's failures are diluted by the old version's calls
    assert not {"ApiLatencyAlarm", "FunctionThrottlesAlarm", "RejectedSignaturesAlarm", "ApiGateway5xxRateAlarm"} & set(
        watched
    )


def test_each_rollback_alarm_reads_the_new_versions_own_calls(stack: Stack) -> None:
    # GIVEN the version this deploy publishes, by the number Lambda gives it
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    number = {"Fn::GetAtt": [version, "Version"]}
    # THEN each rollback alarm is scoped to that number: Lambda's per-version metrics through the alias
    # (ExecutedVersion), and the handler's by its function_version dimension
    for name in rollback_alarms(stack):
        alarm = stack.properties(name)
        metrics = [each["MetricStat"]["Metric"] for each in alarm.get("Metrics", []) if "MetricStat" in each]
        written = stack.resources[name]["Properties"].get("Metrics", [])  # a query's !Sub, its variables unresolved
        queries = [each["Expression"] for each in written if isinstance(each.get("Expression"), dict)]
        dimension_sets = [alarm.get("Dimensions", [])] if "Dimensions" in alarm else []
        dimension_sets += [metric["Dimensions"] for metric in metrics]
        for dimensions in dimension_sets:
            named = {each["Name"]: each["Value"] for each in dimensions}
            assert number in (named.get("ExecutedVersion"), named.get("function_version")), (name, named)
        for query in queries:
            text, variables = query["Fn::Sub"]
            assert "function_version = '${Version}'" in text, name
            assert variables["Version"] == number, name
        assert dimension_sets or queries, name


def test_a_new_version_is_heard_by_the_pre_traffic_hook_before_any_call_shifts(stack: Stack) -> None:
    # GIVEN the alias CodeDeploy moves, the version this deploy publishes, and the hook
    _, alias = stack.one_of_type("AWS::Lambda::Alias")
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    hook = stack.properties("PreTrafficHook")
    # THEN CodeDeploy runs the hook before it shifts any call to the new version
    assert alias["UpdatePolicy"]["CodeDeployLambdaAliasUpdate"]["BeforeAllowTrafficHook"] == {"Ref": "PreTrafficHook"}
    # AND the hook is told that version, which each deploy writes anew, and the key's secret to sign with
    assert hook["Environment"]["Variables"]["MEDIAN_NEW_VERSION"] == {"Ref": version}
    assert hook["Environment"]["Variables"]["MEDIAN_KEY_SECRET_ID"] == variables(stack)["MEDIAN_KEY_SECRET_ID"]
    # AND it is never rolled out itself: no alias, version or deployment group of its own
    assert len(stack.of_type("AWS::Lambda::Alias")) == 1
    assert len(stack.of_type("AWS::CodeDeploy::DeploymentGroup")) == 1
    # AND it has time for two answers of the function (each up to its Timeout) and its own steps
    assert hook["Timeout"] >= 4 * function(stack)["Timeout"]


def test_the_hook_runs_from_the_functions_own_build() -> None:
    # GIVEN the two functions as written, and the Makefile's targets sam build runs for them
    written = load_template()["Resources"]
    made = {
        name: subprocess.run(  # noqa: S603
            ["make", "-n", "-o", ".venv/.installed", f"build-{name}", "ARTIFACTS_DIR=/tmp/artifact"],  # noqa: S607
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for name in (FUNCTION, "PreTrafficHook")
    }
    # THEN the hook's code is the function's artifact, built by the same command: the manifest it
    # compares a new version's GET with is the one that version serves
    for name in (FUNCTION, "PreTrafficHook"):
        assert written[name]["Properties"]["CodeUri"] == "."
        assert written[name]["Metadata"]["BuildMethod"] == "makefile"
    assert made[FUNCTION] == made["PreTrafficHook"]
    assert 'build-artifact "/tmp/artifact"' in made[FUNCTION]
    # AND its handler is the runtime's hook, which the artifact holds
    module, _, handler = written["PreTrafficHook"]["Properties"]["Handler"].rpartition(".")
    assert callable(getattr(importlib.import_module(module), handler))
    assert not module.startswith(tuple(f"median_lambda.{part.removesuffix('.py')}" for part in DEVELOPER_PARTS))


def stage_rollout(config_env: str) -> Stack:
    """template.yaml as `sam deploy --config-env <config_env>` deploys it, with samconfig.toml's values for it."""
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    return translated(**parameter_overrides(config[config_env]["deploy"]["parameters"]))


def deployment_config(stack: Stack) -> str:
    _, group = stack.one_of_type("AWS::CodeDeploy::DeploymentGroup")
    config: str = stack.resolve(group["Properties"]["DeploymentConfigName"])
    return config.removeprefix("CodeDeployDefault.Lambda")


def test_production_takes_a_new_version_gradually_and_its_alarms_can_stop_it() -> None:
    # GIVEN production as samconfig.toml deploys it
    stack = stage_rollout("production")
    # THEN CodeDeploy shifts its traffic gradually, a canary or in steps, never all at once
    assert deployment_config(stack).startswith(("Canary", "Linear")), deployment_config(stack)
    # AND the alarms that roll a broken version back are the stack's own, all three of them
    assert len(rollback_alarms(stack)) == 3


def test_staging_and_make_deploy_take_a_new_version_at_once() -> None:
    # GIVEN staging, and `make deploy`'s stack, as samconfig.toml deploys them
    # THEN each moves its traffic at once: no waiting in a stage no customer uses
    assert deployment_config(stage_rollout("staging")) == "AllAtOnce"
    assert deployment_config(stage_rollout("default")) == "AllAtOnce"


@pytest.mark.parametrize("deployment_type", template_parameters()["DeploymentType"]["AllowedValues"])
def test_the_deployment_type_parameter_chooses_codedeploys_configuration(deployment_type: str) -> None:
    # GIVEN a stack deployed with one of the offered types
    stack = translated(DeploymentType=deployment_type)
    _, group = stack.one_of_type("AWS::CodeDeploy::DeploymentGroup")
    # THEN CodeDeploy shifts traffic by the Lambda configuration of that name
    assert stack.resolve(group["Properties"]["DeploymentConfigName"]) == f"CodeDeployDefault.Lambda{deployment_type}"


def test_all_at_once_is_the_default(stack: Stack) -> None:
    assert template_parameters()["DeploymentType"]["Default"] == "AllAtOnce"


def test_snapstart_is_off_by_default_and_in_every_stage_as_shipped(stack: Stack) -> None:
    # GIVEN the template's default, and each config-env of samconfig.toml as it ships
    # THEN no version is snapshotted, and the one alias serves them
    assert "SnapStart" not in function(stack)
    assert len(stack.of_type("AWS::Lambda::Alias")) == 1
    for config_env in ("default", "staging", "production"):
        assert "SnapStart" not in function(stage_rollout(config_env)), config_env


def test_a_stage_switches_snapstart_on_with_one_value_in_its_samconfig_section() -> None:
    # GIVEN production's samconfig.toml section with EnableSnapStart=true added to its overrides, and
    # staging's as it ships
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    production = parameter_overrides(config["production"]["deploy"]["parameters"])
    stack = translated(**{**production, "EnableSnapStart": "true"})
    # THEN production's function snapshots its published versions, the ones behind the one alias
    assert function(stack)["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert len(stack.of_type("AWS::Lambda::Alias")) == 1
    # AND the version says so, so the deploy that switches it publishes one to snapshot
    (_, version) = stack.one_of_type("AWS::Lambda::Version")
    assert "snapstart:on" in stack.resolve(version["Properties"]["Description"])
    # AND staging, deployed from the same template, does not
    assert "SnapStart" not in function(stage_rollout("staging"))


def test_reserved_concurrency_is_set_only_when_its_line_is_uncommented(stack: Stack) -> None:
    # GIVEN the template as it ships: no cap, and no concurrency held back from the account's other functions
    assert "ReservedConcurrentExecutions" not in function(stack)
    # WHEN its line is uncommented, as its comment says
    capped = translated(edited(RESERVED_25))
    # THEN the function has that cap
    assert function(capped)["ReservedConcurrentExecutions"] == 25


@pytest.mark.parametrize(("architecture", "suffix"), [("arm64", "-Arm64"), ("x86_64", "")])
def test_the_extension_layer_is_awss_for_the_region_and_architecture(architecture: str, suffix: str) -> None:
    # GIVEN a project whose architecture was set (by copier copy, median_lambda/project/architecture.py), and the
    # extension's default layer (AWS's published ARN)
    stack = translated(with_architecture(architecture))
    (layer,) = function(stack)["Layers"]
    # THEN the function runs on that architecture, with the extension's layer published in the stack's
    # region for it
    assert function(stack)["Architectures"] == [architecture]
    match = LAYER_ARN.fullmatch(layer)
    assert match is not None, layer
    assert (match["region"], match["arm"] or "") == (REGION, suffix)
    # AND the handler is switched to it, on the extension's port
    assert variables(stack)[EXTENSION_PORT_ENV] == "2773"


def test_the_extension_keeps_no_cache_of_its_own(stack: Stack) -> None:
    # GIVEN the handler's own key cache (KEY_CACHE_SECONDS) and its refresh after a mismatch
    assert KEY_CACHE_SECONDS > 0
    # THEN the extension caches nothing on top: each read the handler makes is a fresh one
    assert variables(stack)[EXTENSION_TTL_ENV] == "0"


def test_a_layer_arn_given_is_the_layer_used() -> None:
    # GIVEN a stack pinned to another version of the extension
    pinned = "arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:12"
    stack = translated(ParametersSecretsExtensionLayerArn=pinned)
    # THEN that is the function's one layer
    assert function(stack)["Layers"] == [pinned]


@pytest.mark.parametrize("without", ["ParametersSecretsExtensionLayerArn=none", "EnableSnapStart=true"])
def test_without_the_extension_the_handler_is_not_switched_to_it(without: str) -> None:
    # GIVEN the extension switched off, or SnapStart on (a restored instance has no AWS_SESSION_TOKEN for it)
    name, _, value = without.partition("=")
    stack = translated(**{name: value})
    # THEN the function has no layer and none of the extension's variables: the handler reads with boto3
    assert function(stack)["Layers"] == []
    assert EXTENSION_PORT_ENV not in variables(stack)
    assert EXTENSION_TTL_ENV not in variables(stack)


def test_every_published_arn_in_the_mapping_is_the_extensions_for_its_region_and_architecture(stack: Stack) -> None:
    # GIVEN the mapping of AWS's published ARNs
    mapping = stack.template["Mappings"]["ParametersSecretsExtension"]
    assert len(mapping) > 20
    for region, arns in mapping.items():
        # THEN each region has both architectures, each the extension's layer in that region
        assert set(arns) == {"arm64", "x86"}, region
        for key, arn in arns.items():
            match = LAYER_ARN.fullmatch(arn)
            assert match is not None, arn
            assert match["region"] == region, arn
            assert bool(match["arm"]) == (key == "arm64"), arn
            expected_partition = {"cn": "aws-cn", "us-gov": "aws-us-gov"}.get(region.rsplit("-", 2)[0], "aws")
            assert match["partition"] == expected_partition, arn


def test_sam_local_runs_without_the_layer() -> None:
    # GIVEN samconfig.toml's settings for sam local (which would download a layer with your credentials)
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))["default"]
    # THEN each sam local command deploys the function locally without the extension
    for command in ("local_invoke", "local_start_api", "local_start_lambda"):
        overrides = config[command]["parameters"]["parameter_overrides"]
        assert "ParametersSecretsExtensionLayerArn=none" in overrides.split(), command
