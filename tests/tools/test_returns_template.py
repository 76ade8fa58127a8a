"""template.yaml's `example: returns` blocks give tools/returns.py its table, and only what it calls on it.

Read from the template as SAM translates it. Deleted with the examples (README, "Make it yours").
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from median_lambda.project.examples import FILES, ROOT, main
from median_lambda.testing import translated

if TYPE_CHECKING:
    from pathlib import Path

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
    # THEN RETURNS_TABLE is overridden by the table's own name, which no deploy's values can change, so no
    # version goes stale
    assert variables["MEDIAN_SETTING_RETURNS_TABLE"] == {"Ref": "ReturnsTable"}
    assert "RETURNS_TABLE" not in variables  # a variable of the setting's own name would not be read
    # AND the returns survive a deleted stack and can be restored to a point in time
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    # AND it is keyed as the tool writes it: one return per order
    assert table["Properties"]["KeySchema"] == [{"AttributeName": "orderNumber", "KeyType": "HASH"}]


def test_make_it_yours_leaves_nothing_of_the_returns_example(tmp_path: Path) -> None:
    # GIVEN copies of template.yaml and tools/settings.toml with the returns example's blocks
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    # WHEN the examples' blocks are deleted, as "Make it yours" does
    assert main(tmp_path) == 0
    # THEN its table, its policy, its variable and its settings are gone
    text = "".join((tmp_path / name).read_text(encoding="utf-8") for name in FILES)
    for name in ("ReturnsTable", "RETURNS_TABLE", "PICKUP_API_URL", "PICKUP_API_TOKEN_SECRET"):
        assert name not in text
