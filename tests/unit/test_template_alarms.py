"""The alarms watch what the handler really emits, and reach a person through a topic only they can use."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from median_lambda.protocol import METRICS_NAMESPACE_ENV, SERVICE_NAME_ENV
from median_lambda.runtime.observability import Metric
from median_lambda.testing import Stack, translated
from median_lambda.testing.template import ACCOUNT_ID

from tests.support.stage_signals import emf_documents, function_signals_environment, stage_output
from tests.template_edits import edited, with_namespace

ALARM = "AWS::CloudWatch::Alarm"
# A Metrics Insights query that sums one metric over every series of a schema: of one version's, for a
# rollback alarm.
INSIGHTS_QUERY = re.compile(
    r"SELECT SUM\((?P<metric>\w+)\) FROM SCHEMA\(\"(?P<namespace>[^\"]+)\", (?P<dimensions>[^)]+)\)"
    r" WHERE service = '(?P<service>[^']+)'(?: AND function_version = '(?P<version>[^']+)')?"
)


def alarms(stack: Stack) -> dict[str, dict[str, Any]]:
    return {name: stack.properties(name) for name in stack.of_type(ALARM)}


def insights_query(alarm: dict[str, Any]) -> re.Match[str] | None:
    """The alarm's Metrics Insights query, parsed; None for an alarm on a plain metric or metric math."""
    (watched,) = [query for query in alarm.get("Metrics", []) if query.get("ReturnData")] or [{}]
    return INSIGHTS_QUERY.fullmatch(watched.get("Expression", ""))


def alarm_summing(stack: Stack, metric: str) -> dict[str, Any]:
    (alarm,) = [
        alarm
        for alarm in alarms(stack).values()
        if (query := insights_query(alarm)) is not None and query["metric"] == metric
    ]
    return alarm


def test_every_alarm_pages_the_topic_and_says_what_to_check_first(stack: Stack) -> None:
    # GIVEN the deployed stack's alarms
    found = alarms(stack)
    # THEN there is one for each thing that needs a person, and each goes to the alarm topic,
    # raising and clearing, with a description that tells the reader where to look
    assert len(found) >= 8
    for name, alarm in found.items():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["OKActions"] == [{"Ref": "AlarmTopic"}], name
        assert "Check first:" in alarm["AlarmDescription"], name
        # AND its name starts with the stack's, which is what the topic policy admits
        assert alarm["AlarmName"].startswith(f"{stack.parameters['AWS::StackName']}-"), name
        # AND no traffic is no alarm
        assert alarm["TreatMissingData"] == "notBreaching", name


def test_the_tool_and_signature_alarms_sum_the_series_the_handler_emits(stack: Stack) -> None:
    # GIVEN a tool that crashes, one that runs out of time, and a forged request, served by a
    # function with the environment the stack gives it
    variables = stack.properties("MedianToolsFunction")["Environment"]["Variables"]
    documents = emf_documents(stage_output(function_signals_environment(variables)))
    # WHEN each project alarm's query is read
    for metric in (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.REJECTED_SIGNATURES):
        query = insights_query(alarm_summing(stack, metric))
        assert query is not None
        # THEN the handler emitted that metric in exactly the query's namespace and dimension set,
        # with the query's service: the one schema CloudWatch files those series under
        carrying = [
            document
            for document in documents
            for directive in document["_aws"]["CloudWatchMetrics"]
            if metric in {each["Name"] for each in directive["Metrics"]}
            and directive["Namespace"] == query["namespace"]
            and [set(dimensions) for dimensions in directive["Dimensions"]]
            == [{name.strip() for name in query["dimensions"].split(",")}]
        ]
        assert carrying, f"no EMF line carries {metric} as the alarm queries it: {query.group(0)}"
        assert all(document["service"] == query["service"] for document in carrying)


def test_the_namespace_is_the_stacks_for_the_handler_and_its_alarms_alike(stack: Stack) -> None:
    # GIVEN the template as it ships
    function = stack.properties("MedianToolsFunction")
    # THEN the handler writes its metrics under the stack's name, and every project alarm reads them there
    assert function["Environment"]["Variables"][METRICS_NAMESPACE_ENV] == stack.parameters["AWS::StackName"]
    for metric in (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.REJECTED_SIGNATURES):
        query = insights_query(alarm_summing(stack, metric))
        assert query is not None and query["namespace"] == stack.parameters["AWS::StackName"]


def test_a_namespace_written_on_its_lines_moves_the_handler_and_its_alarms_together() -> None:
    # GIVEN a stack whose metrics namespace a user named, on each of its lines as the template's comment says
    stack = translated(with_namespace("AcmeSupportTools"))
    function = stack.properties("MedianToolsFunction")
    # THEN the function is told that namespace in the variable the handler reads it from
    assert function["Environment"]["Variables"][METRICS_NAMESPACE_ENV] == "AcmeSupportTools"
    # AND the service the alarms filter on is the one the handler's metrics carry: the stack's name
    assert function["Environment"]["Variables"][SERVICE_NAME_ENV] == stack.parameters["AWS::StackName"]
    # AND every project alarm queries that namespace, for that service
    for metric in (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.REJECTED_SIGNATURES):
        query = insights_query(alarm_summing(stack, metric))
        assert query is not None and query["namespace"] == "AcmeSupportTools"
        assert query["service"] == stack.parameters["AWS::StackName"]


def test_crashes_and_timeouts_page_at_the_first_and_signatures_only_in_a_burst() -> None:
    # GIVEN a stack with its own burst threshold, written on the alarm's line
    stack = translated(edited(("      Threshold: 20\n", "      Threshold: 35\n")))
    crashes, timeouts, rejected = (
        alarm_summing(stack, metric)
        for metric in (Metric.TOOL_CRASHES, Metric.TOOL_TIMEOUTS, Metric.REJECTED_SIGNATURES)
    )
    # THEN one crash or one timeout is an alarm
    for alarm in (crashes, timeouts):
        assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    # AND refused signatures alarm past the threshold in 5 minutes, whatever their cause
    assert (rejected["Threshold"], rejected["ComparisonOperator"]) == (35, "GreaterThanThreshold")
    (watched,) = rejected["Metrics"]
    assert watched["Period"] == 300


def test_the_function_alarms_watch_the_alias_the_api_calls(stack: Stack) -> None:
    # GIVEN the alias SAM publishes and the function alarms
    _, alias = stack.one_of_type("AWS::Lambda::Alias")
    alias_name = alias["Properties"]["Name"]
    found = {alarm["MetricName"]: alarm for alarm in alarms(stack).values() if alarm.get("Namespace") == "AWS/Lambda"}
    # THEN errors are counted on that alias of this function, throttles on the function
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    errors = {each["Name"]: each["Value"] for each in found["Errors"]["Dimensions"]}
    assert errors == {
        "FunctionName": {"Ref": "MedianToolsFunction"},
        "Resource": f"${{MedianToolsFunction}}:{alias_name}",
        "ExecutedVersion": {"Fn::GetAtt": [version, "Version"]},
    }
    throttles = {each["Name"]: each["Value"] for each in found["Throttles"]["Dimensions"]}
    assert throttles == {"FunctionName": {"Ref": "MedianToolsFunction"}}
    assert found["Errors"]["Threshold"] == found["Throttles"]["Threshold"] == 0


def test_the_api_alarms_watch_this_apis_stage() -> None:
    # GIVEN a stack with its own latency and 5XX thresholds, written on their alarms' lines
    api_5xx = "may be 5XX before this alarm fires.\n      Threshold: 5\n"
    stack = translated(
        edited(("      Threshold: 5000\n", "      Threshold: 1500\n"), (api_5xx, api_5xx.replace(": 5\n", ": 2\n")))
    )
    stage_name = stack.properties(stack.one_of_type("AWS::ApiGatewayV2::Stage")[0])["StageName"]
    api_alarms = [alarm for alarm in alarms(stack).values() if "ApiGateway" in json.dumps(alarm)]
    latency = next(alarm for alarm in api_alarms if alarm.get("MetricName") == "Latency")
    rate = next(alarm for alarm in api_alarms if "Metrics" in alarm)
    # THEN p99 latency is held to its threshold on this API's stage
    assert (latency["ExtendedStatistic"], latency["Threshold"]) == ("p99", 1500)
    assert {each["Name"]: each["Value"] for each in latency["Dimensions"]} == {
        "ApiId": {"Ref": "MedianToolsApi"},
        "Stage": stage_name,
    }
    # AND the 5XX rate is 5xx over Count of that stage, in percent, against its threshold
    metrics = {query["Id"]: query for query in rate["Metrics"]}
    stats = {query["MetricStat"]["Metric"]["MetricName"]: query for query in metrics.values() if "MetricStat" in query}
    assert set(stats) == {"5xx", "Count"}
    for query in stats.values():
        dimensions = {each["Name"]: each["Value"] for each in query["MetricStat"]["Metric"]["Dimensions"]}
        assert dimensions == {"ApiId": {"Ref": "MedianToolsApi"}, "Stage": stage_name}
    (expression,) = [query["Expression"] for query in metrics.values() if query.get("ReturnData")]
    assert f"100 * FILL({stats['5xx']['Id']}, 0) / {stats['Count']['Id']}" in expression
    assert rate["Threshold"] == 2


def test_the_thresholds_as_written_and_the_dashboards_lines_at_them(stack: Stack) -> None:
    # GIVEN the alarms as the template ships them, and the dashboard's lines drawn at their thresholds
    latency, rejected = (
        next(alarm for alarm in alarms(stack).values() if alarm.get("MetricName") == "Latency"),
        alarm_summing(stack, Metric.REJECTED_SIGNATURES),
    )
    (rate,) = [alarm for alarm in alarms(stack).values() if '"5xx"' in json.dumps(alarm)]
    version_rate = stack.properties("Api5xxRateAlarm")
    # THEN they fire at 5 s of p99 latency, 5 % of the API's 5XX answers, 5 % of a version's, and 20
    # refused signatures in 5 minutes
    assert (latency["Threshold"], rate["Threshold"], version_rate["Threshold"], rejected["Threshold"]) == (
        5000,
        5,
        5,
        20,
    )
    # AND each line the dashboard draws "at the alarm" is at that alarm's threshold, so a changed
    # threshold that left its line behind is found here
    name, _ = stack.one_of_type("AWS::CloudWatch::Dashboard")
    widgets = json.loads(stack.properties(name)["DashboardBody"])["widgets"]
    lines = {
        widget["properties"]["title"]: line["value"]
        for widget in widgets
        for line in widget["properties"].get("annotations", {}).get("horizontal", [])
        if "alarm" in line["label"]
    }
    assert lines == {"API latency (ms)": latency["Threshold"], "Rejected signatures, by cause": rejected["Threshold"]}
    # AND no alarm's description names a number of its own, which a changed threshold would leave wrong
    for alarm in (latency, rate, version_rate, rejected):
        assert not re.search(r"\b(5000|20|5)\b ?(ms|%|requests)", alarm["AlarmDescription"])


def test_idempotency_throttles_alarm_on_reads_or_writes_alone(stack: Stack) -> None:
    # GIVEN the idempotency table's alarm
    (alarm,) = [alarm for alarm in alarms(stack).values() if "AWS/DynamoDB" in json.dumps(alarm)]
    queries = {query["Id"]: query for query in alarm["Metrics"]}
    stats = {query["MetricStat"]["Metric"]["MetricName"]: query for query in queries.values() if "MetricStat" in query}
    # THEN it watches both kinds of throttle on the handler's table
    assert set(stats) == {"ReadThrottleEvents", "WriteThrottleEvents"}
    for query in stats.values():
        assert query["MetricStat"]["Metric"]["Dimensions"] == [
            {"Name": "TableName", "Value": {"Ref": "IdempotencyTable"}}
        ]
    # AND either one alone raises it: a series with no throttles has no data point, so each is filled
    (expression,) = [query["Expression"] for query in queries.values() if query.get("ReturnData")]
    for query in stats.values():
        assert f"FILL({query['Id']}, 0)" in expression


def test_the_topic_is_encrypted_with_a_key_cloudwatch_may_use(stack: Stack) -> None:
    # GIVEN the alarm topic and its key
    topic = stack.properties("AlarmTopic")
    key_name, key = stack.one_of_type("AWS::KMS::Key")
    # THEN the topic is encrypted with the stack's own key, not alias/aws/sns (whose policy CloudWatch cannot use)
    assert topic["KmsMasterKeyId"] == {"Ref": key_name}
    statements = stack.resolve(key["Properties"]["KeyPolicy"])["Statement"]
    (cloudwatch,) = [each for each in statements if each["Principal"] == {"Service": "cloudwatch.amazonaws.com"}]
    # AND the key lets CloudWatch, for this account only, do what publishing to it needs
    assert cloudwatch["Effect"] == "Allow"
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    assert cloudwatch["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT_ID}}
    assert key["Properties"]["EnableKeyRotation"] is True


def test_undelivered_alarms_rest_under_the_topics_key() -> None:
    # GIVEN a stack that mails its alarms, with a queue for those SNS could not deliver
    stack = translated(AlarmEmail="oncall@example.com")
    key_name, key = stack.one_of_type("AWS::KMS::Key")
    # THEN the queue is encrypted with the topic's own key, so an alarm is no easier to read there than in the topic
    assert stack.properties("UndeliveredAlarmsQueue")["KmsMasterKeyId"] == {"Ref": key_name}
    assert "SqsManagedSseEnabled" not in stack.properties("UndeliveredAlarmsQueue")
    # AND the key lets SNS, for this account only, write into the queue and nothing more
    statements = stack.resolve(key["Properties"]["KeyPolicy"])["Statement"]
    (sns,) = [each for each in statements if each["Principal"] == {"Service": "sns.amazonaws.com"}]
    assert sns["Effect"] == "Allow"
    assert set(sns["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    assert sns["Condition"] == {"StringEquals": {"aws:SourceAccount": ACCOUNT_ID}}


def test_only_this_stacks_alarms_may_publish_to_the_topic(stack: Stack) -> None:
    # GIVEN the topic's policy
    policy = stack.properties("AlarmTopicPolicy")
    assert policy["Topics"] == [{"Ref": "AlarmTopic"}]
    statements = policy["PolicyDocument"]["Statement"]
    allows = [each for each in statements if each["Effect"] == "Allow"]
    denies = [each for each in statements if each["Effect"] == "Deny"]
    # THEN the one thing it allows is CloudWatch publishing, for alarms of this account and stack
    (allow,) = allows
    assert allow["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert allow["Action"] == "sns:Publish"
    assert allow["Condition"]["StringEquals"] == {"aws:SourceAccount": ACCOUNT_ID}
    # each of the stack's alarms by its own ARN: `alarm:<stack>-*` would admit stack <stack>-eu's too
    sources = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert sorted(sources, key=str) == sorted(
        ({"Fn::GetAtt": f"{name}.Arn"} for name in stack.of_type("AWS::CloudWatch::Alarm")), key=str
    )
    # AND everyone else, the account's own roles included, is refused publishing
    (deny,) = denies
    assert (deny["Principal"], deny["Action"]) == ("*", "sns:Publish")
    assert deny["Condition"] == {"StringNotEquals": {"aws:PrincipalServiceName": "cloudwatch.amazonaws.com"}}


@pytest.mark.parametrize(("email", "subscribed"), [("", False), ("oncall@example.com", True)])
def test_the_email_is_subscribed_only_when_one_is_given(email: str, subscribed: bool) -> None:
    # GIVEN a stack deployed with or without an alarm email
    stack = translated(AlarmEmail=email)
    name, _ = stack.one_of_type("AWS::SNS::Subscription")
    # THEN the subscription (and the queue of mail SNS could not deliver) exists only with an address
    assert stack.exists(name) is subscribed
    assert stack.exists("UndeliveredAlarmsQueue") is subscribed
    if subscribed:
        subscription = stack.properties(name)
        assert (subscription["Protocol"], subscription["Endpoint"]) == ("email", email)
        assert subscription["TopicArn"] == {"Ref": "AlarmTopic"}
        assert subscription["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": "UndeliveredAlarmsQueue.Arn"}}


class Datapoint(float):
    """A value of one minute, divided as metric math divides: by zero, no number (NaN), never an exception."""

    def __truediv__(self, other: float) -> Datapoint:
        return Datapoint(float(self) / other if other else float("nan"))

    def __mul__(self, other: float) -> Datapoint:
        return Datapoint(float(self) * other)

    __rmul__ = __mul__


def math_expression_value(expression: str, values: dict[str, float | None]) -> float:
    """A metric math expression of IF, FILL, MAX([...]) and arithmetic, for one minute's values (None: no data).

    Read with Python's own parser, the functions as CloudWatch's guide defines them: FILL(m, v) is m, or v where
    m has no data; MAX([a, b]) the larger of each point; IF(c, a, b) a where c holds, else b.
    """
    functions = {
        "IF": lambda condition, then, otherwise: then if condition else otherwise,
        "FILL": lambda value, filler: Datapoint(filler if value is None else value),
        "MAX": lambda values: Datapoint(max(values)),
    }
    return float(eval(expression, {"__builtins__": {}}, {**functions, **values}))  # noqa: S307 - the template's text


def test_the_version_5xx_alarm_divides_the_handlers_5xx_count_by_the_versions_own_invocations(stack: Stack) -> None:
    # GIVEN the alarm, the version this deploy publishes, and what the handler writes serving a crash and a timeout
    alarm = stack.properties("Api5xxRateAlarm")
    version, _ = stack.one_of_type("AWS::Lambda::Version")
    queries = {query["Id"]: query for query in alarm["Metrics"]}
    metrics = {
        query["MetricStat"]["Metric"]["MetricName"]: query for query in queries.values() if "MetricStat" in query
    }
    variables = stack.properties("MedianToolsFunction")["Environment"]["Variables"]
    documents = emf_documents(stage_output(function_signals_environment(variables)))
    # THEN it reads ServerErrors in the namespace, the service and the one dimension set the handler writes it
    # with (a line of its own per 5XX: the crash and the timeout), for the new version's number
    errors = metrics[Metric.SERVER_ERRORS]["MetricStat"]["Metric"]
    dimensions = {each["Name"]: each["Value"] for each in errors["Dimensions"]}
    assert dimensions == {
        "service": stack.parameters["AWS::StackName"],
        "function_version": {"Fn::GetAtt": [version, "Version"]},
    }
    written = [
        document
        for document in documents
        for directive in document["_aws"]["CloudWatchMetrics"]
        if Metric.SERVER_ERRORS in {each["Name"] for each in directive["Metrics"]}
        and directive["Namespace"] == errors["Namespace"]
        and [set(each) for each in directive["Dimensions"]] == [set(dimensions)]
        and document["service"] == dimensions["service"]
    ]
    assert len(written) == 2
    # AND it divides by Lambda's invocations of that version through `live`, minute by minute
    invocations = metrics["Invocations"]["MetricStat"]["Metric"]
    assert invocations["Namespace"] == "AWS/Lambda"
    assert {each["Name"]: each["Value"] for each in invocations["Dimensions"]} == {
        "FunctionName": {"Ref": "MedianToolsFunction"},
        "Resource": "${MedianToolsFunction}:live",
        "ExecutedVersion": {"Fn::GetAtt": [version, "Version"]},
    }
    assert {query["MetricStat"]["Period"] for query in metrics.values()} == {60}
    assert (alarm["EvaluationPeriods"], alarm["ComparisonOperator"]) == (1, "GreaterThanThreshold")


@pytest.mark.parametrize(
    ("errors", "invocations", "rolls_back"),
    [
        (1, 19, True),  # at fewer than 20 calls a minute to the version, one 5XX is past 5 %
        (4, 20, True),  # a version failing a fifth of its calls, at any traffic
        (40, 200, True),
        (1, 0, True),  # the 5XX counted in the minute after its invocation's
        (1, 100, False),  # one transient 5XX among a hundred calls a minute rolls nothing back
        (0, 50, False),
        (None, 50, False),  # no 5XX: ServerErrors has no data point at all
        (None, None, False),  # no call reached the version this minute
    ],
)
def test_the_version_5xx_alarm_breaches_at_a_share_of_the_versions_calls(
    stack: Stack, errors: int | None, invocations: int | None, rolls_back: bool
) -> None:
    # GIVEN one minute of the new version's 5XX answers and invocations
    alarm = stack.properties("Api5xxRateAlarm")
    (watched,) = [query for query in alarm["Metrics"] if query.get("ReturnData")]
    # WHEN the alarm's expression is evaluated for it, as CloudWatch evaluates metric math
    value = math_expression_value(watched["Expression"], {"errors": errors, "invocations": invocations})
    # THEN it is past the threshold exactly when that share of the version's calls failed
    assert (value > alarm["Threshold"]) is rolls_back, value
