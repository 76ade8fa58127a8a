"""Where a warm POST's microseconds go: each step of `lambda_handler`'s POST timed alone, in the same rounds.

Each step is the handler's own function, called on the same calls as the warm POST loop (its input
made by the steps before it, outside the timing): reading the event and checking the signature,
parsing the call, its context, finding the tool, validating the input under its time limit, running
the tool under its own with its answer's JSON, recording the metrics, publishing them, and the answer
as Lambda returns it with the invocation's mark and end. What the whole warm POST takes beyond their
sum is the calls between them and what the steps share in the CPU's caches (the same code run in a
loop of its own is faster than amid the rest), given as a row of its own.

It runs in the warm container (bench/container.py), on the artifact's modules, and reads them below
their public face: it measures them, and is the first thing to change when they do.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from bench.container import Context, time_loop

if TYPE_CHECKING:
    from collections.abc import Callable

# The steps, in the order a warm POST takes them (median_lambda/app.py, median_lambda/calls/dispatch.py).
STEPS = (
    "the event read and the signature checked (the key from its cache)",
    "the call parsed (strict JSON, its members)",
    "the call's context (ToolContext, its deadline)",
    "the tool found (its module imported already)",
    "the input validated, under its time limit",
    "the tool run, under its time limit, and its answer's JSON",
    "its metrics recorded (ToolCalls, ToolDuration)",
    "its metrics published (its EMF line; Powertools' shared set published and emptied, with its ColdStart check)",
    "the answer as Lambda returns it, the invocation marked and ended",
)


def _steps(events: list[dict[str, Any]]) -> list[tuple[str, Callable[[int], Any]]]:
    """Each step as a function of the call's index in `events`, its inputs made beforehand."""
    from median_lambda import app
    from median_lambda.authoring.registry import load_tools_for
    from median_lambda.calls import dispatch
    from median_lambda.calls.idempotency import applies
    from median_lambda.request.events import method_of, read_request
    from median_lambda.request.responses import raw_json_answer
    from median_lambda.request.signature import parse_header
    from median_lambda.runtime import observability, time_limits

    context: Any = Context()
    requests = [read_request(event, method_of(event)) for event in events]
    documents = [dispatch.parse_body(request.body) for request in requests]
    contexts = [dispatch._context(document.get("callId"), {}, "request-id", context) for document in documents]
    tool = load_tools_for("orderStatus").find("orderStatus")
    assert tool is not None, "the example project serves orderStatus"
    arguments = [dispatch.validate_input(tool, document["input"]) for document in documents]
    answers = [
        dispatch._run("Tool", tool.function, {tool.model_parameter: args}, ctx)
        for args, ctx in zip(arguments, contexts, strict=True)
    ]

    def signature(index: int) -> Any:
        event = events[index]
        request = read_request(event, method_of(event))
        return app._verified(request, parse_header(request.header("median-signature")), context)

    def parsed(index: int) -> Any:
        body = requests[index].body
        document = dispatch.parse_body(body)
        dispatch._check_version(document)
        members = dispatch._call_members(document)
        return members, dispatch._may_hold_lone_surrogates(body)

    def context_made(index: int) -> Any:
        return dispatch._context(documents[index].get("callId"), {}, "request-id", context)

    def found(index: int) -> Any:
        return load_tools_for("orderStatus").find("orderStatus"), applies(
            documents[index].get("callId"), tool.idempotent
        )

    def validated(index: int) -> Any:
        return dispatch._validated_in_time(tool, documents[index]["input"], contexts[index], 0.0)

    def ran(index: int) -> Any:
        kwargs = {tool.model_parameter: arguments[index]}
        return dispatch._run("Tool", tool.function, kwargs, contexts[index])

    def recorded(index: int) -> Any:
        observability.record_tool_run(tool.name, None, 0.05)
        observability._unpublished.clear()

    def published(index: int) -> Any:
        observability.record_tool_run(tool.name, None, 0.05)
        observability.flush_metrics()

    def answered(index: int) -> Any:
        observability.invocation_started(context)
        answer = answers[index]
        response = raw_json_answer(answer.status, answer.json())
        app._sendable(response, context)
        time_limits.lift_all()
        return response

    return list(
        zip(STEPS, (signature, parsed, context_made, found, validated, ran, recorded, published, answered), strict=True)
    )


def _by_index(step: Callable[[int], Any]) -> Callable[[dict[str, Any]], Any]:
    return lambda call: step(call["index"])


def time_breakdown(ours: Callable[[dict[str, Any]], Any], rounds: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The whole warm POST and each step, µs per call, in rounds rotated as the warm loops are."""
    whole: list[float] = []
    steps: dict[str, list[float]] = {name: [] for name in STEPS}
    for round_number, events in enumerate(rounds):
        functions = dict(_steps(events))
        timed: list[tuple[list[float], Callable[[dict[str, Any]], Any], list[dict[str, Any]]]] = [(whole, ours, events)]
        indexed = [{"index": index} for index in range(len(events))]
        for name in STEPS:
            timed.append((steps[name], _by_index(functions[name]), indexed))
        shift = round_number % len(timed)
        for samples, function, calls in timed[shift:] + timed[:shift]:
            samples.append(time_loop(function, calls))
    # The publish step records as well, to have something to publish: what publishing adds is the difference.
    recorded, published = steps[STEPS[6]], steps[STEPS[7]]
    steps[STEPS[7]] = [max(0.0, both - alone) for both, alone in zip(published, recorded, strict=True)]
    total = statistics.median(whole)
    timings = [(name, round(statistics.median(samples), 2)) for name, samples in steps.items()]
    rest = "the rest: the calls between them, and what the steps share in the CPU's caches"
    timings.append((rest, round(total - sum(us for _, us in timings), 2)))
    rows = [{"step": name, "us": us, "share": round(us / total, 3)} for name, us in timings]
    return {"warm_post_us": round(total, 2), "calls": len(rounds[0]), "rounds": len(rounds), "steps": rows}
