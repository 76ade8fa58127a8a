"""The cases: what each row of the table weighs against what.

The first eight carry the targets (bench/ratios.py's TARGETS): the cold POST as deployed (the
idempotency table on, the key through the extension, orderStatus through the record) against the
least a table-on POST must do and against the peer with Powertools Idempotency on the same table;
the warm POST of orderStatus as the example declares it (a read: no table), as its floor makes no
write, against that floor and against the peer, which publishes the same per-tool metrics. The
rows for information weigh each other configuration of
ours against the peer, the peer against the floors, the floors against each other, and the warm
POST with the table, with no target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.ratios import paired_case

if TYPE_CHECKING:
    from bench.cold import ColdProcesses
    from bench.ratios import Case
    from bench.warm import WarmLoop, WarmLoops

_DEFAULT = "the template's default: extension on"
_DEPLOYED = "as deployed: the table on, the key through the extension"
_A_READ = "orderStatus as tools/orders.py declares it, idempotent=False: no table for its calls"


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
        paired_case(cold.post_deployed.name, "ms", cold.floor_table, cold.post_deployed, _DEPLOYED),
        paired_case("cold POST as deployed against the peer's", "ms", cold.peer_post_table, cold.post_deployed),
        paired_case("warm GET", "µs", warm.get["the floor"], warm.get["warm GET"]),
        paired_case("warm POST", "µs", warm.post["the floor"], warm.post["warm POST"], _A_READ),
        paired_case(
            "warm POST against the peer's",
            "µs",
            warm.post["the peer's warm POST"],
            warm.post["warm POST"],
            "both publishing its per-tool metrics",
        ),
    ]


def informational_cases(cold: ColdProcesses, warm: WarmLoops, idempotent: list[WarmLoop]) -> list[Case]:
    return [
        paired_case("the extension floor against the boto3 floor", "ms", cold.floor_boto3, cold.floor_extension),
        paired_case("the table-on floor against the boto3 floor", "ms", cold.floor_boto3, cold.floor_table),
        paired_case(
            "cold POST as deployed, the tool declared idempotent=False, against the peer's without the table",
            "ms",
            cold.peer_post,
            cold.post_read,
            "a pure read: no table for its calls",
        ),
        paired_case(cold.post_read.name, "ms", cold.floor_extension, cold.post_read, "against the extension floor"),
        paired_case(cold.post_boto3.name, "ms", cold.floor_boto3, cold.post_boto3, "as make serve runs"),
        paired_case(
            "cold POST without the table, key through the extension, against the peer's without it",
            "ms",
            cold.peer_post,
            cold.post_extension,
        ),
        paired_case("cold GET, key through boto3, against the peer's", "ms", cold.peer_get, cold.get_boto3),
        paired_case("warm GET against the peer's", "µs", warm.get["the peer's warm GET"], warm.get["warm GET"]),
        paired_case("the peer's cold GET", "ms", cold.floor_boto3, cold.peer_get),
        paired_case("the peer's cold POST", "ms", cold.floor_table, cold.peer_post_table, "with the table"),
        paired_case("the peer's cold POST without the table", "ms", cold.floor_boto3, cold.peer_post),
        paired_case("the peer's warm GET", "µs", warm.get["the floor"], warm.get["the peer's warm GET"]),
        paired_case("the peer's warm POST", "µs", warm.post["the floor"], warm.post["the peer's warm POST"]),
        paired_case(
            "warm POST as deployed against the peer's, both with the table (moto's DynamoDB)",
            "ms",
            idempotent[0],
            idempotent[1],
            "two writes per call each",
        ),
    ]
