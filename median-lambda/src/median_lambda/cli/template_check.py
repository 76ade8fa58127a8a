"""What CloudFormation would accept but deploy wrong, or refuse only mid-deploy: `make validate` runs it.

    python -m median_lambda.cli.template_check [template.yaml]

For each function that publishes versions behind an alias (AutoPublishAlias), it fails (exit
1, one paragraph per problem, each naming the parameter and the fix) when:

- a Parameter reaches the function's versioned properties (an environment variable, a layer,
  memory, anything a version keeps) but not its VersionDescription. SAM names the version by a
  hash of the properties as written, with the parameter still a `!Ref`, so a changed value
  alone updates the function and publishes no version: `live` keeps the old configuration,
  and nothing says so. A parameter in VersionDescription replaces the version when it changes.
  A switch is the same: a Condition written between two literals, flipped by editing it,
  reaches the function through an `!If` that reads the same either way.
- VersionDescription could exceed Lambda's 256 characters, counting each parameter at its
  longest allowed value (its AllowedValues, MaxLength, or MinValue/MaxValue). A parameter with
  none of them is unbounded: it is counted at its longest known value (its default, or a
  samconfig.toml override) and reported, since CloudFormation would accept a longer one.
- its environment variables could exceed Lambda's 4 KB (keys and values, counted the same way).
- the extension's layer it picks from the ParametersSecretsExtension mapping is for another
  architecture than its `Architectures` (an x86_64 function cannot run an arm64 extension).
- an alarm or the dashboard reads the handler's metrics under another namespace than the one the
  function writes them under (POWERTOOLS_METRICS_NAMESPACE): it would never see them.

And for samconfig.toml, beside the template: a `parameter_overrides` that names a parameter the
template does not have. `sam deploy` drops such a value without a word (it passes only the
template's parameters), so a value that was a parameter once and is written in the template now
(FunctionMemorySize, say) would quietly stop applying.

cfn-lint (`sam validate --lint`, the rest of `make validate`) already checks the template's
size and its counts of parameters, resources and outputs, but not these: it takes a
parameter's value as unknown, so neither limit is checked where a parameter is involved.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from median_lambda.project.architecture import MAPPING_KEYS
from median_lambda.project.sam_config import SAMCONFIG, TEMPLATE, load_template, parameter_overrides

VERSION_DESCRIPTION_LIMIT = 256  # Lambda's limit on a version's description
ENVIRONMENT_LIMIT = 4096  # Lambda's limit on a function's variables, names and values together
# Properties a published version does not keep: they belong to the function, its alias, its role
# or its triggers, and apply to every version at once. A parameter only here needs no new version.
UNVERSIONED_PROPERTIES = frozenset(
    {
        "AutoPublishAlias",
        "AutoPublishAliasAllProperties",
        "AutoPublishCodeSha256",
        "DeploymentPreference",
        "Description",
        "EventInvokeConfig",
        "Events",
        "FunctionUrlConfig",
        "PermissionsBoundary",
        "Policies",
        "ProvisionedConcurrencyConfig",
        "ReservedConcurrentExecutions",
        "Tags",
        "VersionDescription",
    }
)
# The longest value of each pseudo parameter (a stack name is at most 128 characters).
PSEUDO_PARAMETER_LENGTHS = {
    "AWS::AccountId": 12,
    "AWS::Region": 14,
    "AWS::Partition": 10,
    "AWS::StackName": 128,
    "AWS::StackId": 128 + 100,
    "AWS::URLSuffix": 16,
    "AWS::NotificationARNs": 0,
    "AWS::NoValue": 0,
}
# A resource's name or ARN, which no parameter bounds: what most services allow a name, and an ARN around it.
RESOURCE_NAME_LENGTH = 255
RESOURCE_ARN_LENGTH = 320
_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")
_HOW_TO_BOUND = "MaxLength: N (a String), MaxValue: N (a Number) or AllowedValues"
EXTENSION_MAPPING = "ParametersSecretsExtension"
NAMESPACE_VARIABLE = "POWERTOOLS_METRICS_NAMESPACE"
# Parameters this template had once, and where each value is written now: a samconfig.toml that
# still passes one is told where its value belongs.
WRITTEN_IN_THE_TEMPLATE = {
    "Architecture": "Globals: Architectures (python -m median_lambda.project.architecture x86_64 sets it)",
    "FunctionTimeout": "Globals: Timeout",
    "FunctionMemorySize": "Globals: MemorySize",
    "LogRetentionInDays": "RetentionInDays of MedianToolsLogGroup and MedianToolsApiAccessLogGroup",
    "MetricsNamespace": "Globals: POWERTOOLS_METRICS_NAMESPACE, and the alarms' and dashboard's Namespace lines",
    "IdempotencyExpirySeconds": "MedianToolsFunction's IDEMPOTENCY_EXPIRY_SECONDS",
    "ApiThrottlingRateLimit": "MedianToolsApi's ThrottlingRateLimit",
    "ApiThrottlingBurstLimit": "MedianToolsApi's ThrottlingBurstLimit",
    "ReservedConcurrency": "MedianToolsFunction's ReservedConcurrentExecutions line (commented out: no cap)",
    "ApiLatencyP99ThresholdMs": "ApiLatencyAlarm's Threshold",
    "Api5xxRatePercentThreshold": "Api5xxRateAlarm's Threshold",
    "RejectedSignaturesThreshold": "RejectedSignaturesAlarm's Threshold",
}


@dataclass(frozen=True)
class Problem:
    """One finding: what is wrong, and the fix, in words a person acts on."""

    subject: str
    message: str

    # Where it is: template.yaml, unless a finding names its own file and line (samconfig.toml:65).
    where: str = "template.yaml"

    def __str__(self) -> str:
        return f"{self.where}: {self.subject}: {self.message}" if self.subject else f"{self.where}: {self.message}"

    @classmethod
    def of(cls, where: str, message: str) -> Problem:
        return cls("", message, where)


@dataclass
class Template:
    document: dict[str, Any]
    # Values a deploy is known to pass, beyond the defaults: samconfig.toml's overrides.
    known_values: dict[str, list[str]]

    @property
    def parameters(self) -> dict[str, dict[str, Any]]:
        parameters: dict[str, dict[str, Any]] = self.document.get("Parameters", {})
        return parameters

    @property
    def conditions(self) -> dict[str, Any]:
        conditions: dict[str, Any] = self.document.get("Conditions", {})
        return conditions

    def parameters_in(self, value: Any, seen_conditions: frozenset[str] = frozenset()) -> set[str]:
        """The template parameters a value depends on, through Ref, Sub and the conditions of If."""
        found: set[str] = set()
        if isinstance(value, list):
            for item in value:
                found |= self.parameters_in(item, seen_conditions)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "Ref" and item in self.parameters:
                    found.add(item)
                elif key == "Fn::Sub":
                    text, variables = (item, {}) if isinstance(item, str) else (item[0], item[1])
                    found |= {name for name in _SUB_VARIABLE.findall(text) if name in self.parameters}
                    found |= self.parameters_in(variables, seen_conditions)
                elif key == "Fn::If":
                    found |= self.condition_parameters(item[0], seen_conditions)
                    found |= self.parameters_in(item[1:], seen_conditions)
                elif key == "Condition" and isinstance(item, str):
                    found |= self.condition_parameters(item, seen_conditions)
                else:
                    found |= self.parameters_in(item, seen_conditions)
        return found

    def condition_parameters(self, name: str, seen: frozenset[str]) -> set[str]:
        if name in seen or name not in self.conditions:
            return set()
        return self.parameters_in(self.conditions[name], seen | {name})

    def switches_in(self, value: Any) -> set[str]:
        """The switches a value depends on: Conditions between literals, reached through If and Condition."""
        found: set[str] = set()
        if isinstance(value, list):
            for item in value:
                found |= self.switches_in(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "Fn::If" and isinstance(item, list) and item:
                    found |= self.condition_switches(str(item[0]))
                    found |= self.switches_in(item[1:])
                elif key == "Condition" and isinstance(item, str):
                    found |= self.condition_switches(item)
                else:
                    found |= self.switches_in(item)
        return found

    def condition_switches(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if name in seen or name not in self.conditions:
            return set()
        definition = self.conditions[name]
        nested = _condition_names(definition)
        if not nested and not self.parameters_in(definition):
            return {name}  # nothing but literals: a switch, flipped by editing the line
        found: set[str] = set()
        for each in nested:
            found |= self.condition_switches(each, seen | {name})
        return found

    def longest(self, name: str) -> tuple[int, bool]:
        """A parameter's longest value, and whether CloudFormation holds it to that."""
        spec = self.parameters[name]
        if "AllowedValues" in spec:
            return max(len(str(value)) for value in spec["AllowedValues"]), True
        if "MaxLength" in spec:
            return int(spec["MaxLength"]), True
        if spec.get("Type") == "Number" and "MaxValue" in spec:
            bounds = [spec["MaxValue"], spec.get("MinValue", spec["MaxValue"])]
            return max(len(str(bound)) for bound in bounds), True
        known = [str(spec.get("Default", "")), *self.known_values.get(name, [])]
        return max(len(value) for value in known), False

    def longest_text(self, value: Any) -> int | None:
        """The longest string a property's value can become; None where it is not a string at all."""
        if isinstance(value, str | int | float | bool):
            return len(str(value).lower() if isinstance(value, bool) else str(value))
        if not isinstance(value, dict) or len(value) != 1:
            return None
        ((function, argument),) = value.items()
        if function == "Ref":
            if argument in self.parameters:
                return self.longest(argument)[0]
            return PSEUDO_PARAMETER_LENGTHS.get(argument, RESOURCE_NAME_LENGTH)
        if function == "Fn::GetAtt":
            return RESOURCE_ARN_LENGTH
        if function == "Fn::If":
            branches = [self.longest_text(branch) for branch in argument[1:]]
            return max((length or 0) for length in branches)
        if function == "Fn::Sub":
            return self._longest_sub(argument)
        if function == "Fn::Join":
            separator, items = argument
            if not isinstance(items, list):
                return None
            lengths = [self.longest_text(item) or 0 for item in items]
            return sum(lengths) + len(separator) * max(len(lengths) - 1, 0)
        return RESOURCE_NAME_LENGTH  # another function (FindInMap, Select, ImportValue): a name's length

    def _longest_sub(self, argument: Any) -> int:
        text, variables = (argument, {}) if isinstance(argument, str) else (argument[0], argument[1])

        def length_of(name: str) -> int:
            if name in variables:
                return self.longest_text(variables[name]) or 0
            if name in self.parameters:
                return self.longest(name)[0]
            if name in PSEUDO_PARAMETER_LENGTHS:
                return PSEUDO_PARAMETER_LENGTHS[name]
            return RESOURCE_ARN_LENGTH if "." in name else RESOURCE_NAME_LENGTH

        literal = _SUB_VARIABLE.sub("", text).replace("${!", "${")
        return len(literal) + sum(length_of(name) for name in _SUB_VARIABLE.findall(text))


def _condition_names(value: Any) -> set[str]:
    """The conditions a condition's definition names (`!Condition X`)."""
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= _condition_names(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key == "Condition" and isinstance(item, str):
                found.add(item)
            else:
                found |= _condition_names(item)
    return found


def function_properties(template: Template, name: str) -> dict[str, Any]:
    """A function's properties as SAM sees them: the template's Globals, then its own (environment merged)."""
    globals_ = template.document.get("Globals", {}).get("Function", {})
    own = template.document["Resources"][name].get("Properties", {})
    merged = {**globals_, **own}
    variables = {
        **globals_.get("Environment", {}).get("Variables", {}),
        **own.get("Environment", {}).get("Variables", {}),
    }
    if variables:
        merged["Environment"] = {"Variables": variables}
    return merged


def stale_parameters(template: Template, name: str, properties: dict[str, Any]) -> list[Problem]:
    in_description = template.parameters_in(properties.get("VersionDescription"))
    problems = []
    for property_name, value in sorted(properties.items()):
        if property_name in UNVERSIONED_PROPERTIES:
            continue
        for parameter in sorted(template.parameters_in(value) - in_description):
            where = property_name
            if property_name == "Environment":
                variables = value.get("Variables", {})
                named = [key for key, each in variables.items() if parameter in template.parameters_in(each)]
                where = ", ".join(f"Environment variable {key}" for key in named) or property_name
            problems.append(
                Problem(
                    f"{name}: Parameter {parameter}",
                    f"reaches the function ({where}) but not its VersionDescription. A changed value "
                    "would update the function and publish no version, so `live` would keep the old "
                    f"configuration without a word. Fix: add ${{{parameter}}} to {name}'s VersionDescription; "
                    "or, for your own configuration, drop the parameter and put the value in "
                    "tools/settings.toml, which ships with the code (README.md's configuration guide).",
                )
            )
            in_description.add(parameter)  # one finding per parameter, at its first property
    return problems + stale_switches(template, name, properties)


def stale_switches(template: Template, name: str, properties: dict[str, Any]) -> list[Problem]:
    in_description = template.switches_in(properties.get("VersionDescription"))
    reached: dict[str, list[str]] = {}
    for property_name, value in sorted(properties.items()):
        if property_name not in UNVERSIONED_PROPERTIES:
            for switch in sorted(template.switches_in(value) - in_description):
                reached.setdefault(switch, []).append(property_name)
    return [
        Problem(
            f"{name}: Condition {switch}",
            f"is a switch written in the template that reaches the function ({', '.join(where)}) but not its "
            "VersionDescription. SAM names a version by the function's properties as written, where a condition "
            "is still an !If, so flipping it alone would update the function and publish no version: `live` "
            f"would keep the old configuration without a word. Fix: add ${{{switch}}} to {name}'s "
            f'VersionDescription, with `{switch}: !If [{switch}, "on", "off"]` among its !Sub\'s variables.',
        )
        for switch, where in reached.items()
    ]


def _written(value: Any) -> str:
    """A template value as its author wrote it: `!Ref AWS::StackName`, or the text itself."""
    if isinstance(value, dict) and len(value) == 1:
        ((function, argument),) = value.items()
        return f"!{str(function).removeprefix('Fn::')} {argument}"
    return str(value)


def extension_for_another_architecture(name: str, properties: dict[str, Any]) -> list[Problem]:
    written = properties.get("Architectures", ["x86_64"])
    architecture = str(written[0]) if isinstance(written, list) and len(written) == 1 else None
    expected = MAPPING_KEYS.get(architecture or "")
    problems = []
    for lookup in _lookups(properties.get("Layers"), EXTENSION_MAPPING):
        key = lookup[2]
        if expected is not None and isinstance(key, str) and key != expected:
            problems.append(
                Problem(
                    f"{name}: Layers",
                    f"picks the extension's layer for `{key}` while the function's Architectures is {architecture}: "
                    "AWS builds the extension for each instruction set, and this one cannot run there. "
                    f"Fix: python -m median_lambda.project.architecture {architecture} (it sets both lines), or set "
                    f"the mapping's key to {expected} by hand.",
                )
            )
    return problems


def _lookups(value: Any, mapping: str) -> list[list[Any]]:
    """Every Fn::FindInMap in a value that reads the mapping, as its arguments."""
    if isinstance(value, list):
        return [found for item in value for found in _lookups(item, mapping)]
    if not isinstance(value, dict):
        return []
    found = []
    for key, item in value.items():
        if key == "Fn::FindInMap" and isinstance(item, list) and item and item[0] == mapping:
            found.append(item)
        else:
            found += _lookups(item, mapping)
    return found


def namespace_readers(template: Template, name: str, properties: dict[str, Any]) -> list[Problem]:
    """Each alarm or dashboard whose `Namespace` is not the one the function writes its metrics under."""
    written = properties.get("Environment", {}).get("Variables", {}).get(NAMESPACE_VARIABLE)
    if written is None:
        return []
    resources: dict[str, dict[str, Any]] = template.document.get("Resources", {})
    problems = []
    for resource_name, resource in resources.items():
        if resource.get("Type") not in ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard"):
            continue
        properties_read = resource.get("Properties", {})
        for read in _sub_variables(properties_read, "Namespace") + _own_metric_namespaces(properties_read):
            if read != written:
                problems.append(
                    Problem(
                        f"{resource_name}: Namespace",
                        f"reads the handler's metrics under {_written(read)}, but {name} writes them under "
                        f"{_written(written)} (its {NAMESPACE_VARIABLE}): it would never see them. Fix: give "
                        f"both the same value (Globals' {NAMESPACE_VARIABLE}, and each `Namespace:` line of the "
                        "alarms and the dashboard).",
                    )
                )
    return problems


def _own_metric_namespaces(value: Any) -> list[Any]:
    """The namespace of each metric an alarm reads by name (a MetricStat's, or its own) that is not AWS's."""
    if isinstance(value, list):
        return [found for item in value for found in _own_metric_namespaces(item)]
    if not isinstance(value, dict):
        return []
    found = []
    for key, item in value.items():
        if key == "Namespace" and not (isinstance(item, str) and item.startswith("AWS/")):
            found.append(item)
        elif key != "Fn::Sub":
            found += _own_metric_namespaces(item)
    return found


def _sub_variables(value: Any, variable: str) -> list[Any]:
    """The values a variable of that name takes in every !Sub [text, {variables}] within a value."""
    if isinstance(value, list):
        return [found for item in value for found in _sub_variables(item, variable)]
    if not isinstance(value, dict):
        return []
    found = []
    for key, item in value.items():
        if key == "Fn::Sub" and isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict):
            found += [item[1][variable]] if variable in item[1] else []
            found += _sub_variables(item[1], variable)
        else:
            found += _sub_variables(item, variable)
    return found


def stale_overrides(document: dict[str, Any], samconfig: Path) -> list[Problem]:
    """Each samconfig.toml `parameter_overrides` entry naming a parameter the template does not have."""
    import tomllib

    try:
        text = samconfig.read_text(encoding="utf-8")
        config = tomllib.loads(text)
    except (FileNotFoundError, tomllib.TOMLDecodeError):
        return []
    parameters = document.get("Parameters", {})
    problems = []
    for environment, commands in config.items():
        if not isinstance(commands, dict):
            continue
        for command, sections in commands.items():
            section = sections.get("parameters", {}) if isinstance(sections, dict) else {}
            for parameter, value in parameter_overrides(section).items():
                if parameter not in parameters:
                    where = f"{samconfig.name}:{_override_line(text, environment, command)}"
                    problems.append(
                        Problem.of(
                            where,
                            f"[{environment}.{command}.parameters] passes {parameter}={value}, "
                            + not_a_parameter(parameter),
                        )
                    )
    return problems


def not_a_parameter(parameter: str) -> str:
    """Why a value passed for a parameter the template does not have is lost, and the fix."""
    lost = "sam deploy passes only the template's parameters, so it would drop this value without a word"
    if parameter in WRITTEN_IN_THE_TEMPLATE:
        return (
            f"which template.yaml no longer takes: the value is written in the template now "
            f"({WRITTEN_IN_THE_TEMPLATE[parameter]}), and {lost}. Fix: write the value there if it is not the "
            f"template's, and drop {parameter} from parameter_overrides."
        )
    return (
        f"which is not one of template.yaml's Parameters: {lost}. Fix: drop it from parameter_overrides, "
        "or add the parameter to the template."
    )


def _override_line(text: str, environment: str, command: str) -> int:
    """The line of a section's parameter_overrides (else of its header) in samconfig.toml's text."""
    header = re.compile(rf"^\s*\[\s*{re.escape(environment)}\s*\.\s*{re.escape(command)}\s*\.\s*parameters\s*\]")
    lines = text.splitlines()
    start = next((at for at, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        return 1
    for at in range(start + 1, len(lines)):
        if lines[at].lstrip().startswith("["):
            break
        if lines[at].lstrip().startswith("parameter_overrides"):
            return at + 1
    return start + 1


def _unbounded(template: Template, parameters: set[str]) -> list[str]:
    return sorted(parameter for parameter in parameters if not template.longest(parameter)[1])


def description_length(template: Template, name: str, properties: dict[str, Any]) -> list[Problem]:
    description = properties.get("VersionDescription")
    if description is None:
        return []
    longest = template.longest_text(description) or 0
    parameters = template.parameters_in(description)
    problems = [
        Problem(
            f"{name}: Parameter {parameter}",
            f"is in VersionDescription with no bound, so a deploy could pass a value that makes the "
            f"description longer than Lambda's {VERSION_DESCRIPTION_LIMIT} characters, and fail only then. "
            f"Fix: bound it with {_HOW_TO_BOUND} (counted meanwhile at its longest known value, "
            f"{template.longest(parameter)[0]} characters).",
        )
        for parameter in _unbounded(template, parameters)
    ]
    if longest > VERSION_DESCRIPTION_LIMIT:
        widest = sorted(parameters, key=lambda parameter: -template.longest(parameter)[0])[:3]
        shares = ", ".join(f"{parameter} up to {template.longest(parameter)[0]}" for parameter in widest)
        problems.append(
            Problem(
                f"{name}: VersionDescription",
                f"can reach {longest} characters with the longest values its parameters allow "
                f"(the longest: {shares}), over Lambda's {VERSION_DESCRIPTION_LIMIT}: a deploy with such "
                "values would fail. Fix: lower those parameters' MaxLength (or MaxValue, AllowedValues), "
                "or move your own values out of the template into tools/settings.toml, which needs no room "
                "here (README.md's configuration guide).",
            )
        )
    return problems


def environment_size(template: Template, name: str, properties: dict[str, Any]) -> list[Problem]:
    variables: dict[str, Any] = properties.get("Environment", {}).get("Variables", {})
    sizes = {key: len(key) + (template.longest_text(value) or 0) for key, value in variables.items()}
    total = sum(sizes.values())
    if total <= ENVIRONMENT_LIMIT:
        return []
    widest = sorted(sizes, key=lambda key: -sizes[key])[:3]
    shares = ", ".join(f"{key} up to {sizes[key]}" for key in widest)
    return [
        Problem(
            f"{name}: Environment",
            f"its variables can reach {total:,} bytes (names and longest allowed values; the largest: "
            f"{shares}), over Lambda's {ENVIRONMENT_LIMIT:,}: a deploy with such values would fail. Fix: "
            "lower the MaxLength of the parameters they hold, or keep large values in tools/settings.toml "
            "(read from the code, not the environment) or in SSM Parameter Store (README.md's configuration guide).",
        )
    ]


def published_functions(template: Template) -> list[str]:
    resources: dict[str, dict[str, Any]] = template.document.get("Resources", {})
    return [
        name
        for name, resource in resources.items()
        if resource.get("Type") == "AWS::Serverless::Function" and "AutoPublishAlias" in resource.get("Properties", {})
    ]


def known_values(samconfig: Path) -> dict[str, list[str]]:
    """Every value samconfig.toml's config-envs pass for each parameter, on any command."""
    import tomllib

    try:
        document = tomllib.loads(samconfig.read_text(encoding="utf-8"))
    except (FileNotFoundError, tomllib.TOMLDecodeError):
        return {}
    values: dict[str, list[str]] = {}
    for environment in document.values():
        if not isinstance(environment, dict):
            continue
        for command in environment.values():
            config = command.get("parameters", {}) if isinstance(command, dict) else {}
            for parameter, value in parameter_overrides(config).items():
                values.setdefault(parameter, []).append(value)
    return values


def check(document: dict[str, Any], samconfig: Path = SAMCONFIG) -> list[Problem]:
    template = Template(document, known_values(samconfig))
    problems = []
    for name in published_functions(template):
        properties = function_properties(template, name)
        problems += stale_parameters(template, name, properties)
        problems += description_length(template, name, properties)
        problems += environment_size(template, name, properties)
        problems += extension_for_another_architecture(name, properties)
        problems += namespace_readers(template, name, properties)
    return problems + stale_overrides(document, samconfig)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else TEMPLATE
    problems = check(load_template(path), SAMCONFIG if path == TEMPLATE else path.parent / SAMCONFIG.name)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s): a deploy would fail, leave `live` stale, or lose a value.", file=sys.stderr)
        return 1
    template = Template(load_template(path), {})
    for name in published_functions(template):
        properties = function_properties(template, name)
        longest = template.longest_text(properties.get("VersionDescription")) or 0
        print(
            f"OK: {path.name}: {name}: every parameter and switch its versions keep is in its VersionDescription, "
            "at most "
            f"{longest} of Lambda's {VERSION_DESCRIPTION_LIMIT} characters ({VERSION_DESCRIPTION_LIMIT - longest} "
            f"to spare); its variables within {ENVIRONMENT_LIMIT:,} bytes."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
