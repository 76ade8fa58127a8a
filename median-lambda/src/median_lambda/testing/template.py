"""template.yaml as CloudFormation gets it: translated by SAM's own translator, offline.

    from median_lambda.testing import translated

    def test_the_function_may_read_its_table():
        stack = translated()  # template.yaml, every parameter at its default
        role = stack.properties("MedianToolsFunctionRole")
        ...

`translated(**parameters)` runs aws-sam-translator (what `sam deploy` and CloudFormation's
transform run) on the template, so tests see the resources SAM generates (the alias, the
version, the CodeDeploy group, the API's stage and integrations), not only what the template
spells out. `Stack.resolve` then evaluates what CloudFormation would for those parameter
values: Ref to a parameter or pseudo parameter, Fn::If with its condition, Fn::FindInMap,
and the parameters in Fn::Sub. Refs to resources stay as they are, so a test can ask which
resource a property points at. Neither library evaluates conditions offline (cfn-lint reasons
about them symbolically), hence the few lines of `_evaluate` below.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

REGION = "eu-west-1"
ACCOUNT_ID = "123456789012"
STACK_NAME = "median-tools"
PSEUDO_PARAMETERS = {
    "AWS::Region": REGION,
    "AWS::AccountId": ACCOUNT_ID,
    "AWS::Partition": "aws",
    "AWS::StackName": STACK_NAME,
    "AWS::URLSuffix": "amazonaws.com",
}
# A parameter without a default: sam deploy always passes one.
REQUIRED_PARAMETERS = {"MedianKeySecretName": "median-tools/median-key"}


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE = _NoValue()


@dataclass
class Stack:
    """The translated template and the parameter values it is deployed with."""

    template: dict[str, Any]
    parameters: dict[str, Any]

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        resources: dict[str, dict[str, Any]] = self.template["Resources"]
        return resources

    def of_type(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {name: resource for name, resource in self.resources.items() if resource["Type"] == resource_type}

    def one_of_type(self, resource_type: str) -> tuple[str, dict[str, Any]]:
        (found,) = self.of_type(resource_type).items()
        return found

    def exists(self, name: str) -> bool:
        """Whether CloudFormation creates the resource: it is there, and its Condition holds."""
        resource = self.resources.get(name)
        return resource is not None and ("Condition" not in resource or self.condition(resource["Condition"]))

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def properties(self, name: str) -> dict[str, Any]:
        """A resource's properties as deployed with these parameters."""
        resolved: dict[str, Any] = self.resolve(self.resources[name].get("Properties", {}))
        return resolved

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in (self.resolve(each) for each in value) if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((function, argument),) = value.items()
            if function in _FUNCTIONS:
                return _FUNCTIONS[function](self, argument)
        resolved = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}


def _ref(stack: Stack, name: str) -> Any:
    if name == "AWS::NoValue":
        return NO_VALUE
    if name in stack.parameters:
        return stack.parameters[name]
    return {"Ref": name}


def _if(stack: Stack, argument: list[Any]) -> Any:
    condition, when_true, when_false = argument
    return stack.resolve(when_true if stack.condition(condition) else when_false)


def _find_in_map(stack: Stack, argument: list[Any]) -> Any:
    mapping, first, second = (stack.resolve(each) for each in argument)
    return stack.template["Mappings"][mapping][first][second]


def _sub(stack: Stack, argument: Any) -> Any:
    text, variables = (argument, {}) if isinstance(argument, str) else argument
    values = {**stack.parameters, **{name: stack.resolve(each) for name, each in variables.items()}}

    def substitute(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return str(value) if isinstance(value, str | int | float) else match.group(0)

    return re.sub(r"\$\{([^}!]+)\}", substitute, text)


def _equals(stack: Stack, argument: list[Any]) -> bool:
    left, right = (stack.resolve(each) for each in argument)
    return str(left) == str(right)


_FUNCTIONS: dict[str, Callable[[Stack, Any], Any]] = {
    "Ref": _ref,
    "Fn::If": _if,
    "Fn::FindInMap": _find_in_map,
    "Fn::Sub": _sub,
    "Fn::Equals": _equals,
    "Fn::Not": lambda stack, argument: not stack.resolve(argument[0]),
    "Fn::And": lambda stack, argument: all(stack.resolve(each) for each in argument),
    "Fn::Or": lambda stack, argument: any(stack.resolve(each) for each in argument),
    "Condition": lambda stack, name: stack.condition(name),
}


def parameter_values(template: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    defaults = {name: spec["Default"] for name, spec in template["Parameters"].items() if "Default" in spec}
    return {**defaults, **REQUIRED_PARAMETERS, **{name: str(value) for name, value in overrides.items()}}


# Where `sam deploy` uploads the artifact: its key is the zip's MD5, so changed code is a new key.
CODE_URI = "s3://artifacts/median-tools.zip"


def translated(
    template: dict[str, Any] | None = None, *, code_uri: str = CODE_URI, stack_name: str = STACK_NAME, **overrides: Any
) -> Stack:
    """The template (template.yaml unless given) as SAM translates it for these parameter values (others:
    defaults), deployed as the stack `stack_name`."""
    template = _template_yaml() if template is None else template
    parameters = parameter_values(template, overrides)
    output = _translate(template, tuple(sorted(parameters.items())), code_uri)
    return Stack(copy.deepcopy(output), {**parameters, **PSEUDO_PARAMETERS, "AWS::StackName": stack_name})


@functools.cache
def _translate_cached(source: str, parameters: tuple[tuple[str, Any], ...], code_uri: str) -> dict[str, Any]:
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    template = json.loads(source)
    # `sam deploy` uploads each function's CodeUri and puts its S3 location there before the transform
    # runs: the tools function's and the PreTraffic hook's are the one build.
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        if resource.get("Type") == "AWS::Serverless::Function" and not str(properties.get("CodeUri", "")).startswith(
            "s3://"
        ):
            properties["CodeUri"] = code_uri
    # A session only to tell the translator the region: it makes no call.
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=REGION))
    output: dict[str, Any] = translator.translate(template, dict(parameters), get_managed_policy_map=dict)
    return output


def _translate(template: dict[str, Any], parameters: tuple[tuple[str, Any], ...], code_uri: str) -> dict[str, Any]:
    # Keyed by the template's text as well, so a test that reads it twice sees one translation.
    return _translate_cached(json.dumps(template, sort_keys=True), parameters, code_uri)


def template_parameters() -> dict[str, dict[str, Any]]:
    parameters: dict[str, dict[str, Any]] = _template_yaml()["Parameters"]
    return parameters


def _template_yaml() -> dict[str, Any]:
    # The project's own reader of template.yaml (its short forms, !Ref and the rest), which the build
    # and `make deploy` use too. Imported here, not at the top: `from median_lambda.testing import ...` then
    # costs a test that never reads the template neither PyYAML nor scripts/.
    from median_lambda.project.sam_config import load_template

    template: dict[str, Any] = load_template()
    return template
