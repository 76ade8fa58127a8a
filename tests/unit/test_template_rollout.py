"""One alias for the API, the rollout and SnapStart; the extension's layer for the stack's region and architecture."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from handler.observability import Metric
from handler.protocol import KEY_CACHE_SECONDS
from scripts.sam_settings import load_template
from tests.sam_template import REGION, Stack, template_parameters, translated

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = "MedianToolsFunction"
# The extension's own variables (AWS's names): its port, which is also the handler's switch, and its cache.
EXTENSION_PORT_ENV = "PARAMETERS_SECRETS_EXTENSION_HTTP_PORT"
EXTENSION_TTL_ENV = "SECRETS_MANAGER_TTL"
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


# Every parameter that changes what the function runs with (its configuration, not its code).
FUNCTION_PARAMETERS = {
    "Architecture": "x86_64",
    "FunctionMemorySize": 1024,
    "FunctionTimeout": 10,
    "LogLevel": "DEBUG",
    "MetricsNamespace": "AcmeSupportTools",
    "EnableTracing": "true",
    "EnableSnapStart": "true",
    "IdempotencyExpirySeconds": 600,
    "ParametersSecretsExtensionLayerArn": "none",
    "MedianKeySecretName": "acme/median-key",
}


@pytest.mark.parametrize(("parameter", "value"), FUNCTION_PARAMETERS.items())
def test_a_changed_parameter_alone_publishes_a_new_version(stack: Stack, parameter: str, value: Any) -> None:
    # GIVEN the same code deployed again with one parameter changed
    changed = translated(**{parameter: value})
    # WHEN CloudFormation compares the version SAM declares with the deployed one
    (before_id, before), (after_id, after) = (each.one_of_type("AWS::Lambda::Version") for each in (stack, changed))
    # THEN it differs in a property that replaces it (its logical id, or its description), so a new
    # version is published from the updated function and the alias moves to it
    before_description = stack.resolve(before["Properties"]["Description"])
    after_description = changed.resolve(after["Properties"]["Description"])
    assert (before_id, before_description) != (after_id, after_description)
    # AND the description stays within Lambda's 256 characters
    assert len(after_description) <= 256


def test_every_parameter_the_function_reads_publishes_a_new_version() -> None:
    # GIVEN the parameters the function's own properties refer to (its configuration)
    template = load_template()
    properties = {k: v for k, v in template["Resources"][FUNCTION]["Properties"].items() if k != "VersionDescription"}
    function = json.dumps([template["Globals"]["Function"], properties])
    referenced = {name for name in template["Parameters"] if re.search(rf'"{name}"|\$\{{{name}\}}', function)}
    # THEN each is among those a change of which the test above shows publishes a version, except
    # those that configure the function and not its versions: concurrency, and the rollout itself
    assert referenced - set(FUNCTION_PARAMETERS) == {"ReservedConcurrency", "DeploymentType"}


def test_the_error_alarms_and_only_they_roll_a_version_back(stack: Stack) -> None:
    # GIVEN the deployment group that shifts the alias
    _, group = stack.one_of_type("AWS::CodeDeploy::DeploymentGroup")
    configuration = group["Properties"]["AlarmConfiguration"]
    watched = {alarm["Name"]["Ref"] for alarm in configuration["Alarms"]}
    # THEN it stops and rolls back on its alarms
    assert configuration["Enabled"] is True
    assert "DEPLOYMENT_STOP_ON_ALARM" in group["Properties"]["AutoRollbackConfiguration"]["Events"]
    # AND those are the alarms that say the new code is broken: errors the function raised, tools that crashed
    metrics = {
        stack.properties(name).get("MetricName") or stack.properties(name)["Metrics"][0]["Expression"]: name
        for name in watched
    }
    assert len(metrics) == 2
    assert metrics.get("Errors") in watched
    assert any(f"SUM({Metric.TOOL_CRASHES})" in metric for metric in metrics)


@pytest.mark.parametrize("deployment_type", template_parameters()["DeploymentType"]["AllowedValues"])
def test_the_deployment_type_parameter_chooses_codedeploys_configuration(deployment_type: str) -> None:
    # GIVEN a stack deployed with one of the offered types
    stack = translated(DeploymentType=deployment_type)
    _, group = stack.one_of_type("AWS::CodeDeploy::DeploymentGroup")
    # THEN CodeDeploy shifts traffic by the Lambda configuration of that name
    assert stack.resolve(group["Properties"]["DeploymentConfigName"]) == f"CodeDeployDefault.Lambda{deployment_type}"


def test_all_at_once_is_the_default(stack: Stack) -> None:
    assert template_parameters()["DeploymentType"]["Default"] == "AllAtOnce"


@pytest.mark.parametrize(("enabled", "snap_start"), [("false", None), ("true", {"ApplyOn": "PublishedVersions"})])
def test_snapstart_applies_to_published_versions_only_when_switched_on(enabled: str, snap_start: Any) -> None:
    # GIVEN a stack with SnapStart switched on or off (off by default)
    assert template_parameters()["EnableSnapStart"]["Default"] == "false"
    stack = translated(EnableSnapStart=enabled)
    # THEN the function snapshots its published versions, the ones behind the one alias, or not at all
    assert function(stack).get("SnapStart") == snap_start
    assert len(stack.of_type("AWS::Lambda::Alias")) == 1


@pytest.mark.parametrize(("reserved", "expected"), [(0, None), (25, "25")])
def test_reserved_concurrency_is_set_only_when_asked_for(reserved: int, expected: str | None) -> None:
    # GIVEN a stack with no reserved concurrency (the default, 0) or some
    assert template_parameters()["ReservedConcurrency"]["Default"] == 0
    stack = translated(ReservedConcurrency=reserved)
    # THEN the function has that cap, or none at all (0 would stop it, not uncap it)
    assert function(stack).get("ReservedConcurrentExecutions") == expected


@pytest.mark.parametrize(("architecture", "suffix"), [("arm64", "-Arm64"), ("x86_64", "")])
def test_the_extension_layer_is_awss_for_the_region_and_architecture(architecture: str, suffix: str) -> None:
    # GIVEN a stack deployed with the extension's default (AWS's published ARN)
    stack = translated(Architecture=architecture)
    (layer,) = function(stack)["Layers"]
    # THEN the layer is the extension's, published in the stack's region for the function's architecture
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


@pytest.mark.parametrize("overrides", [{"ParametersSecretsExtensionLayerArn": "none"}, {"EnableSnapStart": "true"}])
def test_without_the_extension_the_handler_is_not_switched_to_it(overrides: dict[str, str]) -> None:
    # GIVEN the extension switched off, or SnapStart on (a restored instance has no AWS_SESSION_TOKEN for it)
    stack = translated(**overrides)
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
