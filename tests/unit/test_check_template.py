"""`make validate`'s template check: a parameter or switch that would leave `live` stale, a limit a deploy would
hit, two lines that must agree and do not, or a samconfig.toml value sam deploy would drop.

Each test edits a copy of template.yaml as a user would (a Parameter and where it goes) and
runs the check on it, as `python -m median_lambda.cli.template_check <copy>` does. Each looks only at
what its own edit changed, so the tests hold whatever a user has already added to the
template: make validate, not make test, is what tells them about their own parameters.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from median_lambda.cli.template_check import check, main
from median_lambda.project.architecture import main as set_architecture
from median_lambda.project.sam_config import load_template
from median_lambda.testing import translated

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = "MedianToolsFunction"
# The function's own: the PreTraffic hook names the key's secret too.
ENVIRONMENT_ANCHOR = "          MEDIAN_STAGE: !Ref Stage\n"
# VersionDescription's text: `!Sub` of a folded string, then its variables.
DESCRIPTION_ANCHOR = "      VersionDescription: !Sub\n        - >-\n"
PARAMETERS_ANCHOR = "Parameters:\n"


def parameter(name: str, *constraints: str, default: str = "https://api.example.com") -> str:
    lines = [f"  {name}:", "    Type: String", f'    Default: "{default}"', *(f"    {each}" for each in constraints)]
    return "\n".join(lines) + "\n"


class TemplateCopy:
    """template.yaml and samconfig.toml copied to a directory, edited there as a user would."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "template.yaml"
        shutil.copy(ROOT / "template.yaml", self.path)
        shutil.copy(ROOT / "samconfig.toml", directory / "samconfig.toml")
        # What the check says of the template before the test's edit: the project's own, as it is.
        self.before = set(check(load_template(self.path), directory / "samconfig.toml"))

    def insert(self, anchor: str, text: str, *, after: bool = True) -> None:
        source = self.path.read_text(encoding="utf-8")
        assert source.count(anchor) == 1, anchor
        self.path.write_text(source.replace(anchor, anchor + text if after else text + anchor, 1), encoding="utf-8")

    def add_parameter(self, text: str) -> None:
        self.insert(PARAMETERS_ANCHOR, text)

    def add_variable(self, name: str, value: str) -> None:
        self.insert(ENVIRONMENT_ANCHOR, f"          {name}: {value}\n")

    def add_to_description(self, text: str) -> None:
        self.insert(DESCRIPTION_ANCHOR, f"          {text}\n")

    def replace(self, old: str, new: str) -> None:
        replace(self, old, new)

    @property
    def samconfig(self) -> Path:
        return self.path.parent / "samconfig.toml"


@pytest.fixture
def template(tmp_path: Path) -> TemplateCopy:
    return TemplateCopy(tmp_path)


def validate(template: TemplateCopy, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """make validate's check on the edited copy: its exit status, and what it says that the edit brought."""
    status = main([str(template.path)])
    captured = capsys.readouterr()
    said = (captured.out + captured.err).splitlines()
    already = {str(problem) for problem in template.before}
    return status, "\n".join(line for line in said if line not in already)


def test_the_check_says_what_it_checked_and_the_room_left(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN template.yaml as the framework ships it: the project's, without what a user added to it
    template = TemplateCopy(tmp_path)
    if template.before:
        pytest.skip("template.yaml has problems of its own: make validate names each with its fix")
    # WHEN make validate checks it
    status = main([str(template.path)])
    # THEN it passes, and says what it checked and the room left in VersionDescription
    output = capsys.readouterr().out
    assert status == 0
    assert "MedianToolsFunction: every parameter and switch its versions keep is in its VersionDescription" in output
    assert re.search(r"at most \d+ of Lambda's 256 characters \(\d+ to spare\)", output)


def test_a_parameter_passed_as_a_variable_but_not_in_the_description_is_named_with_the_fix(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a user's new Parameter, passed to the function as an environment variable, and nothing more
    template.add_parameter(parameter("ProbeBaseUrl", "MaxLength: 40"))
    template.add_variable("PROBE_BASE_URL", "!Ref ProbeBaseUrl")
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it fails, naming the parameter, where it goes, what would go wrong and the fix
    assert status == 1
    assert "Parameter ProbeBaseUrl" in output
    assert "PROBE_BASE_URL" in output
    assert "`live` would keep the old configuration" in output
    assert "add ${ProbeBaseUrl} to MedianToolsFunction's VersionDescription" in output
    assert "tools/settings.toml" in output


def test_the_danger_it_names_is_real_a_changed_value_alone_publishes_no_version(template: TemplateCopy) -> None:
    # GIVEN that same template, deployed twice with two values of the parameter
    template.add_parameter(parameter("ProbeBaseUrl", "MaxLength: 40"))
    template.add_variable("PROBE_BASE_URL", "!Ref ProbeBaseUrl")
    document = load_template(template.path)
    before, after = (translated(document, ProbeBaseUrl=url) for url in ("https://a.example", "https://b.example"))
    # THEN SAM declares the same version both times, with the same description: no version is published
    (before_id, before_version), (after_id, after_version) = (
        stack.one_of_type("AWS::Lambda::Version") for stack in (before, after)
    )
    assert before_id == after_id
    assert before.resolve(before_version["Properties"]["Description"]) == after.resolve(
        after_version["Properties"]["Description"]
    )


def test_with_the_fix_applied_the_check_passes_and_a_changed_value_publishes_a_version(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the parameter also in VersionDescription, as the check advises, bounded short enough
    template.add_parameter(parameter("ProbeBaseUrl", "MaxLength: 8", default="https://"))
    template.add_variable("PROBE_BASE_URL", "!Ref ProbeBaseUrl")
    template.add_to_description("${ProbeBaseUrl}")
    # WHEN make validate checks it
    _, output = validate(template, capsys)
    # THEN it has nothing to say about that parameter
    assert "ProbeBaseUrl" not in output
    # AND a changed value replaces the version (its description holds the value)
    document = load_template(template.path)
    before, after = (translated(document, ProbeBaseUrl=url) for url in ("https://", "http://"))
    descriptions = [
        stack.resolve(stack.one_of_type("AWS::Lambda::Version")[1]["Properties"]["Description"])
        for stack in (before, after)
    ]
    assert descriptions[0] != descriptions[1]


def replace(template: TemplateCopy, old: str, new: str) -> None:
    source = template.path.read_text(encoding="utf-8")
    assert source.count(old) == 1, old
    template.path.write_text(source.replace(old, new), encoding="utf-8")


def through_a_layer(template: TemplateCopy) -> None:
    replace(template, "        - []\n      Environment:", "        - [!Ref ProbeHost]\n      Environment:")


def through_globals(template: TemplateCopy) -> None:
    replace(template, "    MemorySize: 512\n", "    MemorySize: !Ref ProbeHost\n")


def through_a_condition(template: TemplateCopy) -> None:
    template.insert("Conditions:\n", '  ProbeGiven: !Not [!Equals [!Ref ProbeHost, ""]]\n')
    template.add_variable("PROBE_ON", '!If [ProbeGiven, "yes", "no"]')


def through_a_sub(template: TemplateCopy) -> None:
    template.add_variable("PROBE_URL", "!Sub https://${ProbeHost}/v1")


@pytest.mark.parametrize("reach", [through_a_layer, through_globals, through_a_condition, through_a_sub])
def test_the_whole_family_of_ways_a_parameter_reaches_the_function_is_found(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str], reach: Callable[[TemplateCopy], None]
) -> None:
    # GIVEN a new parameter that reaches the function's version another way than a plain !Ref variable
    template.add_parameter(parameter("ProbeHost", "MaxLength: 8", default="carrier"))
    reach(template)
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it names that parameter as one that would leave `live` stale
    assert status == 1
    assert "Parameter ProbeHost" in output
    assert "not its VersionDescription" in output


def test_a_parameter_only_in_what_versions_do_not_keep_needs_no_version(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a parameter used only in the function's policies, which apply to every version at once
    template.add_parameter(parameter("ProbeTableName", "MaxLength: 64", default="orders"))
    template.insert(
        "        # Lambda writes the function's logs with its role, into LoggingConfig's group: that\n",
        "        - DynamoDBReadPolicy:\n            TableName: !Ref ProbeTableName\n",
        after=False,
    )
    # WHEN make validate checks the template
    _, output = validate(template, capsys)
    # THEN it has nothing to say about it
    assert "ProbeTableName" not in output


def test_the_issues_four_parameters_and_a_pinned_layer_are_over_256_before_any_deploy(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN four ordinary configuration parameters, each passed as a variable and in VersionDescription
    names = ["ProbeBaseUrl", "ProbeTimeoutSeconds", "ProbeTableName", "ProbeEmail"]
    for name in names:
        template.add_parameter(parameter(name, "MaxLength: 60"))
        template.add_variable(name.upper(), f"!Ref {name}")
        template.add_to_description(f"${{{name}}}")
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it says the description can exceed Lambda's 256, how far, which parameters weigh most, and the fix
    assert status == 1
    assert "VersionDescription: can reach" in output
    assert "over Lambda's 256" in output
    assert "up to 110" in output  # the pinned layer's ARN, the longest
    assert "lower those parameters' MaxLength" in output
    assert "tools/settings.toml" in output
    assert "not its VersionDescription" not in output


def test_an_unbounded_parameter_in_the_description_is_named_with_how_to_bound_it(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a parameter in VersionDescription with no MaxLength, MaxValue or AllowedValues
    template.add_parameter(parameter("ProbeRegion", default="eu"))
    template.add_variable("PROBE_REGION", "!Ref ProbeRegion")
    template.add_to_description("${ProbeRegion}")
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it names it as unbounded, says how to bound it, and how it was counted meanwhile
    assert status == 1
    assert "Parameter ProbeRegion: is in VersionDescription with no bound" in output
    assert "MaxLength: N" in output
    assert "longest known value, 2 characters" in output


def test_a_samconfig_value_counts_for_an_unbounded_parameter(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an unbounded parameter whose value in a samconfig.toml config-env is long
    template.add_parameter(parameter("ProbeRegion", default="eu"))
    template.add_variable("PROBE_REGION", "!Ref ProbeRegion")
    template.add_to_description("${ProbeRegion}")
    samconfig = template.path.parent / "samconfig.toml"
    long_value = "r" * 70
    samconfig.write_text(
        samconfig.read_text(encoding="utf-8").replace(
            " Stage=production", f" Stage=production ProbeRegion={long_value}"
        ),
        encoding="utf-8",
    )
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN the value production deploys with is what it counts, and the description is over
    assert status == 1
    assert "longest known value, 70 characters" in output
    assert "over Lambda's 256" in output


def test_variables_that_could_pass_4_kb_are_named(template: TemplateCopy, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a large value in a variable, as a user might paste a certificate into the template
    template.add_variable("PROBE_CA_BUNDLE", '"' + "A" * 3800 + '"')
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it says the variables can exceed Lambda's 4 KB, the largest of them, and where else to keep it
    assert status == 1
    assert "over Lambda's 4,096" in output
    assert "PROBE_CA_BUNDLE up to" in output
    assert "SSM Parameter Store" in output


def test_a_switch_that_reaches_the_function_but_not_its_description_is_named_with_the_fix(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a user's own switch, a condition between two literals flipped by editing it, that sets a variable
    template.insert("Conditions:\n", '  VerboseProbes: !Equals ["off", "on"]\n')
    template.add_variable("PROBE_VERBOSE", '!If [VerboseProbes, "yes", "no"]')
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it fails, naming the switch, where it goes, what would go wrong and the fix
    assert status == 1
    assert "Condition VerboseProbes: is a switch written in the template" in output
    assert "(Environment)" in output
    assert "`live` would keep the old configuration" in output
    assert '`VerboseProbes: !If [VerboseProbes, "on", "off"]`' in output


def test_with_the_switch_in_the_description_the_check_passes_and_flipping_it_publishes_a_version(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN that switch in VersionDescription, as the check advises
    template.insert("Conditions:\n", '  VerboseProbes: !Equals ["off", "on"]\n')
    template.add_variable("PROBE_VERBOSE", '!If [VerboseProbes, "yes", "no"]')
    template.add_to_description("verbose:${VerboseProbes}")
    variables = '        - SnapStart: !If [SnapStartEnabled, "on", "off"]\n'
    template.insert(variables, '          VerboseProbes: !If [VerboseProbes, "on", "off"]\n')
    # WHEN make validate checks it
    _, output = validate(template, capsys)
    # THEN it has nothing to say about it
    assert "VerboseProbes" not in output
    # AND flipped, the switch replaces the version (its description holds it)
    before = translated(load_template(template.path))
    template.replace('VerboseProbes: !Equals ["off", "on"]', 'VerboseProbes: !Equals ["on", "on"]')
    after = translated(load_template(template.path))
    descriptions = [
        stack.resolve(stack.one_of_type("AWS::Lambda::Version")[1]["Properties"]["Description"])
        for stack in (before, after)
    ]
    assert "verbose:off" in descriptions[0] and "verbose:on" in descriptions[1]


def test_an_architecture_changed_by_hand_without_its_extension_layer_is_named_with_the_fix(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN Globals' Architectures edited to x86_64 by hand, the extension's layer still arm64's
    template.replace("    Architectures: [arm64]\n", "    Architectures: [x86_64]\n")
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it fails, naming the layer, the two architectures and the command that sets both
    assert status == 1
    assert "MedianToolsFunction: Layers: picks the extension's layer for `arm64`" in output
    assert "Architectures is x86_64" in output
    assert "python -m median_lambda.project.architecture x86_64" in output
    # AND once that command has run, nothing is said of it
    assert set_architecture(["x86_64", "--template", str(template.path)]) == 0
    _, output = validate(template, capsys)
    assert "Layers" not in output


def test_an_alarm_reading_another_namespace_than_the_function_writes_is_named(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a namespace written on the function's line, and on every alarm's and the dashboard's but one
    # (a query's or the dashboard's `- Namespace:` variable, or a metric's own `Namespace:`)
    source = template.path.read_text(encoding="utf-8")
    readers = source.count("Namespace: !Ref AWS::StackName\n")
    assert readers >= 2
    source = source.replace("POWERTOOLS_METRICS_NAMESPACE: !Ref AWS::StackName", "POWERTOOLS_METRICS_NAMESPACE: Acme")
    source = source.replace("Namespace: !Ref AWS::StackName\n", "Namespace: Acme\n", readers - 1)
    template.path.write_text(source, encoding="utf-8")
    # WHEN make validate checks the template
    status, output = validate(template, capsys)
    # THEN it fails, naming the one reader left behind, both namespaces and the lines to make agree
    assert status == 1
    (line,) = [line for line in output.splitlines() if ": Namespace: reads" in line]
    assert (
        "reads the handler's metrics under !Ref AWS::StackName, but MedianToolsFunction writes them under Acme" in line
    )
    assert "each `Namespace:` line" in line
    # AND with that last line written too, nothing is said of the namespace
    template.replace("Namespace: !Ref AWS::StackName\n", "Namespace: Acme\n")
    _, output = validate(template, capsys)
    assert "Namespace" not in output


@pytest.mark.parametrize(
    ("passed", "said"),
    [
        ("FunctionMemorySize=1024", "the value is written in the template now (Globals: MemorySize)"),
        ("ApiLatencyP99ThresholdMs=3000", "(ApiLatencyAlarm's Threshold)"),
        ("Architecture=x86_64", "python -m median_lambda.project.architecture x86_64 sets it"),
        ("ProbeHostName=carrier", "which is not one of template.yaml's Parameters"),
    ],
)
def test_a_samconfig_value_for_no_parameter_of_the_template_is_named_where_it_is_and_where_it_belongs(
    template: TemplateCopy, capsys: pytest.CaptureFixture[str], passed: str, said: str
) -> None:
    # GIVEN production's samconfig.toml section passing a value the template takes as no parameter: one
    # that was a parameter before and is written in the template now, or a typo
    text = template.samconfig.read_text(encoding="utf-8")
    assert text.count(" Stage=production") == 1
    template.samconfig.write_text(text.replace(" Stage=production", f" Stage=production {passed}"), encoding="utf-8")
    line = next(at for at, each in enumerate(text.splitlines(), 1) if "Stage=production" in each)
    # WHEN make validate checks the template and its samconfig.toml
    status, output = validate(template, capsys)
    # THEN it fails, naming the file, line and section, the value, where it belongs now, and that
    # sam deploy would drop it without a word
    assert status == 1
    (found,) = [each for each in output.splitlines() if passed in each]
    assert found.startswith(f"samconfig.toml:{line}: [production.deploy.parameters] passes {passed}, ")
    assert said in found
    assert "drop this value without a word" in found
