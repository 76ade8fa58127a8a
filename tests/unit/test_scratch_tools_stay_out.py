"""The test-only tools never reach the manifest other tests and Median's sync rules see."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from handler.testing import MedianTestClient
    from tests.scratch_tools import ScratchTools


def test_a_get_while_scratch_tools_are_registered_serves_only_the_example_tools(
    client: MedianTestClient, scratch: ScratchTools
) -> None:
    # GIVEN scratch tools registered for this test, and callable
    assert client.call("countRunsFresh", {}).status == 200
    # WHEN the manifest is asked for
    names = {listed["name"] for listed in client.manifest().body["tools"]}
    # THEN it lists the example tools and none of the scratch ones
    assert "orderStatus" in names
    assert not names & {"countRuns", "countRunsFresh", "waitForRelease", "crashQuotingInput"}
