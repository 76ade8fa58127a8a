"""The cases: what each row of the table weighs against what.

The first eight carry issue 11's targets (bench/ratios.py's TARGETS); the rows for information
weigh each configuration of ours against the peer, the peer against the floors, the two floors
against each other, and idempotency on, with no target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.ratios import paired_case

if TYPE_CHECKING:
    from bench.cold import ColdProcesses
    from bench.ratios import Case
    from bench.warm import WarmLoop, WarmLoops

_DEFAULT = "the template's default: extension on"


def key_read_through_extension(cold: ColdProcesses) -> bool:
    """Whether the cold GET meant to read the key through the extension did: it never imported botocore."""
    return "botocore" not in cold.get_extension.modules


def target_cases(cold: ColdProcesses, warm: WarmLoops) -> list[Case]:
    not_through_extension = (
        "" if key_read_through_extension(cold) else "THE KEY WAS READ THROUGH BOTO3: this code has no extension path"
    )
    return [
        paired_case(cold.get_extension.name, "ms", cold.floor_extension, cold.get_extension, not_through_extension),
        paired_case(cold.get_boto3.name, "ms", cold.floor_boto3, cold.get_boto3),
        paired_case("cold GET against the peer's", "ms", cold.peer_get, cold.get_extension, _DEFAULT),
        paired_case(cold.post_boto3.name, "ms", cold.floor_boto3, cold.post_boto3),
        paired_case("cold POST against the peer's", "ms", cold.peer_post, cold.post_extension, _DEFAULT),
        paired_case("warm GET", "µs", warm.get["the floor"], warm.get["warm GET"]),
        paired_case("warm POST", "µs", warm.post["the floor"], warm.post["warm POST"]),
        paired_case("warm POST against the peer's", "µs", warm.post["the peer's warm POST"], warm.post["warm POST"]),
    ]


def informational_cases(cold: ColdProcesses, warm: WarmLoops, idempotent: list[WarmLoop]) -> list[Case]:
    return [
        paired_case("the extension floor against the boto3 floor", "ms", cold.floor_boto3, cold.floor_extension),
        paired_case(cold.post_extension.name, "ms", cold.floor_boto3, cold.post_extension, "against the boto3 floor"),
        paired_case("cold GET, key through boto3, against the peer's", "ms", cold.peer_get, cold.get_boto3),
        paired_case("cold POST, key through boto3, against the peer's", "ms", cold.peer_post, cold.post_boto3),
        paired_case("warm GET against the peer's", "µs", warm.get["the peer's warm GET"], warm.get["warm GET"]),
        paired_case("the peer's cold GET", "ms", cold.floor_boto3, cold.peer_get),
        paired_case("the peer's cold POST", "ms", cold.floor_boto3, cold.peer_post),
        paired_case("the peer's warm GET", "µs", warm.get["the floor"], warm.get["the peer's warm GET"]),
        paired_case("the peer's warm POST", "µs", warm.post["the floor"], warm.post["the peer's warm POST"]),
        paired_case(
            "warm POST, idempotency on (moto's DynamoDB)",
            "ms",
            idempotent[0],
            idempotent[1],
            "two writes per call, which the floor does not make",
        ),
        paired_case(cold.post_idempotent.name, "ms", cold.floor_boto3, cold.post_idempotent, "against the boto3 floor"),
    ]
