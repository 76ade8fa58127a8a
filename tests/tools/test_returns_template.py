"""template.yaml's `example: returns` blocks give tools/returns.py its table, and only what it calls on it.

Read from the template as SAM translates it. Deleted with the examples (README, "Make it yours").
"""

from __future__ import annotations

from tests.sam_template import translated

TABLE = {"Fn::GetAtt": ["ReturnsTable", "Arn"]}


def test_the_function_may_make_exactly_the_tools_two_calls_on_the_returns_table() -> None:
    # GIVEN the stack as CloudFormation gets it
    stack = translated()
    role = stack.properties("MedianToolsFunctionRole")
    # WHEN the role's grants on the returns table are collected
    granted = {
        action
        for policy in role["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
        if statement["Resource"] in (TABLE, {"Fn::GetAtt": "ReturnsTable.Arn"})
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }
    # THEN they are the GetItem and the conditional PutItem startReturn makes, no Scan, no Delete
    assert granted == {"dynamodb:GetItem", "dynamodb:PutItem"}


def test_the_function_is_told_the_tables_name_and_the_table_keeps_its_returns() -> None:
    # GIVEN the stack as CloudFormation gets it
    stack = translated()
    variables = stack.properties("MedianToolsFunction")["Environment"]["Variables"]
    table = stack.resources["ReturnsTable"]
    # THEN RETURNS_TABLE is the table's own name, which no deploy's values can change, so no version goes stale
    assert variables["RETURNS_TABLE"] == {"Ref": "ReturnsTable"}
    # AND the returns survive a deleted stack and can be restored to a point in time
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    # AND it is keyed as the tool writes it: one return per order
    assert table["Properties"]["KeySchema"] == [{"AttributeName": "orderNumber", "KeyType": "HASH"}]
