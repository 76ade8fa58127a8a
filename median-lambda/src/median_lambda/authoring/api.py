"""The authoring API: `@tool`, `@diagnostics`, `ToolError` and `ToolContext`.

A tool's name, description and input schema come from the function itself, so an author
writes each fact once:

    @tool(risk="low")
    def order_status(args: OrderStatusInput, ctx: ToolContext) -> dict:
        \"\"\"Look up the status of one of the customer's orders.\"\"\"
"""

from __future__ import annotations

import inspect
import sys
import time
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict

from median_lambda.authoring.registry import Tool, ToolDefinitionError, registry
from median_lambda.protocol import RISKS
from median_lambda.runtime.env import shown_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools.utilities.typing import LambdaContext

F = TypeVar("F", bound="Callable[..., Any]")


class ToolError(Exception):
    """Raised by a tool to decline a call. The message goes to Median's agent, so write it for the agent."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about the call beyond its input."""

    call_id: str | None = None
    conversation: dict[str, Any] = field(default_factory=dict)
    request_id: str = ""
    lambda_context: LambdaContext | None = None
    # When the endpoint gives up on the tool and answers 504 `timeout`, by time.monotonic(): the
    # Lambda's deadline less TOOL_TIME_MARGIN_SECONDS and the time kept for the AWS calls still
    # to come (the answer's record). None where there is no Lambda context.
    deadline: float | None = None

    @property
    def reference(self) -> str:
        """What an error answer names so that the call's log lines can be found: the request id."""
        return self.request_id or "unknown"

    def remaining_seconds(self) -> float | None:
        """Seconds left before the endpoint answers `timeout` for this call, or None if unbounded.

        A tool that calls slow services can pass this on as their timeout, or give up early
        with a ToolError that tells the agent what to do instead.
        """
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def aws_client(self, service: str, **options: str) -> Any:
        """A boto3 client for `service` (`"dynamodb"`, `"s3"`, ...) whose calls end before this call's time does.

        Its timeouts and retries are the most generous that still leave the tool time to catch
        botocore's error and raise a ToolError (median_lambda/runtime/aws_clients.py, `bounds_within`). Clients
        are kept per container. `options` go to boto3.client (region_name, endpoint_url).
        """
        from median_lambda.runtime.aws_clients import client_within

        return client_within(service, self.remaining_seconds(), **options)

    def http_timeout(self, at_most: float | None = None) -> float:
        """Seconds an outbound HTTP request may wait: what is left, less time to raise a ToolError.

        Pass it as the timeout of httpx, requests or urllib (`timeout=ctx.http_timeout()`). At
        most `at_most` (default 10 s); 10 s, or `at_most`, where nothing bounds the call.
        """
        from median_lambda.runtime.aws_clients import http_timeout_within

        return http_timeout_within(self.remaining_seconds(), at_most)


def camel_case(snake: str) -> str:
    head, *rest = snake.strip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# additionalProperties: false, as the manifest says; and no infinities, which a JSON number
# too large for a double would otherwise become in a float field, and no JSON can carry back.
_INPUT_RULES = ConfigDict(extra="forbid", allow_inf_nan=False)


def _closed(model: type[BaseModel]) -> type[BaseModel]:
    """The model, held to the input rules every tool's schema promises."""
    if all(model.model_config.get(name) == value for name, value in _INPUT_RULES.items()):
        return model
    # A subclass keeps isinstance(args, TheAuthorsModel) true inside the tool. Its validator is
    # built at the tool's first call, not here: a cold POST then builds the called tool's alone.
    config = ConfigDict(**{**model.model_config, **_INPUT_RULES, "defer_build": True})
    return type(model.__name__, (model,), {"model_config": config, "__module__": model.__module__})


# Where the authoring API was reached from, to tell the author their own file and line.
_THIS_FILE = __file__


def _declaration(function: object = None) -> tuple[str, int]:
    """(file, line) of the line that applied the decorator, in the file that defines `function`.

    Without a function (or for one defined elsewhere), the first line outside this module that
    reached the authoring API: a helper module of the author's that wraps `tool` points at itself.
    """
    code = getattr(function, "__code__", None)
    defining_file = code.co_filename if code is not None else None
    frame = inspect.currentframe()
    outside: tuple[str, int] | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == defining_file:
            return filename, frame.f_lineno
        if outside is None and filename != _THIS_FILE:
            outside = (filename, frame.f_lineno)
        frame = frame.f_back
    if code is not None:
        return code.co_filename, code.co_firstlineno
    return outside or ("<unknown>", 0)


def _declared_at(function: object = None) -> str:
    """ "tools/loyalty.py:12", as an error names the author's line."""
    filename, line = _declaration(function)
    return f"{shown_path(filename)}:{line}"


def _named(function: object) -> str:
    named = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    # A function defined inside another is named as it is written: `points_balance`, not `f.<locals>.points_balance`.
    return str(named).rsplit("<locals>.", 1)[-1] if named else repr(function)


_RISK_HINT = f'write @tool(risk="low"), with one of {", ".join(RISKS)}'


def _refuse_generators(function: Callable[..., Any], what: str) -> None:
    # A generator's body never runs when it is called: the answer would be an unrun generator.
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise ToolDefinitionError(
            _declared_at(function),
            f"{_named(function)} yields; {what} returns its answer once: use return, not yield",
        )


def _unresolvable(error: Exception) -> str:
    return f"an annotation cannot be resolved ({type(error).__name__}: {error}); correct what it names"


class _Parameters(typing.NamedTuple):
    model_parameter: str
    model: type[BaseModel]
    context_parameter: str | None
    dependencies: tuple[tuple[str, Any], ...]  # (parameter, a Settings subclass or a Secret/Parameter)


def _parameters(function: Callable[..., Any]) -> _Parameters:
    """The tool's parameters, sorted by what fills them — or a ToolDefinitionError that says what to fix."""
    # Only a module that imported Settings, Secret or Parameter can declare one, so theirs are
    # looked up, not imported: a cold POST whose tools take none never loads settings.toml's
    # reader (tomllib, pathlib; ~9 ms of a cold POST here, 2.5% of the boto3 floor).
    settings = sys.modules.get("median_lambda.authoring.settings")
    dependencies_module = sys.modules.get("median_lambda.authoring.dependencies")

    def refused(problem: str) -> ToolDefinitionError:
        return ToolDefinitionError(_declared_at(function), f"{_named(function)}: {problem}")

    _refuse_generators(function, "a tool")
    try:
        hints = typing.get_type_hints(function)
    except NameError as error:  # an annotation naming what the module does not define or import
        raise refused(f"an annotation cannot be resolved ({error}); import what it names") from None
    except Exception as error:  # `module.Misspelt`, a string that is no expression: the same family
        raise refused(_unresolvable(error)) from None
    model_parameter: tuple[str, type[BaseModel]] | None = None
    context_parameter: str | None = None
    dependencies: list[tuple[str, Any]] = []
    for name, parameter in inspect.signature(function).parameters.items():
        hint = hints.get(name)
        default = parameter.default
        if dependencies_module and default in (dependencies_module.Secret, dependencies_module.Parameter):
            raise refused(f'parameter {name!r} = {default.__name__}: call it, as {default.__name__}("name")')
        if dependencies_module and isinstance(default, dependencies_module.Dependency):
            problem = default.problem()
            if problem is not None:
                raise refused(f"parameter {name!r}: {problem}")
            if hint is not str:
                raise refused(f"parameter {name!r} = {default!r} must be annotated `str`: the value is text")
            dependencies.append((name, default))
        elif settings and isinstance(hint, type) and issubclass(hint, settings.Settings):
            if hint is settings.Settings:
                raise refused(f"parameter {name!r}: annotate it with your own subclass of Settings, not Settings")
            dependencies.append((name, hint))
        elif isinstance(hint, type) and issubclass(hint, BaseModel):
            if model_parameter is not None:
                raise refused("only one parameter may be annotated with a pydantic model")
            model_parameter = (name, hint)
        elif hint is ToolContext:
            if context_parameter is not None:
                raise refused("only one parameter may be annotated with ToolContext")
            context_parameter = name
        else:
            raise refused(
                f"parameter {name!r} must be annotated with a pydantic model (the input), ToolContext or a Settings"
                ' subclass, or default to Secret("...") or Parameter("...")'
            )
    if model_parameter is None:
        raise refused("one parameter must be annotated with a pydantic BaseModel: the tool's input")
    return _Parameters(model_parameter[0], model_parameter[1], context_parameter, tuple(dependencies))


def _check_dependencies(function: Callable[..., Any], dependencies: tuple[tuple[str, Any], ...]) -> None:
    """Refuse a Settings class whose own code is wrong (a field's type that names nothing), at its line.

    Its values are not read here: a value missing from one stage must stop that tool's calls, not
    every tool's import. They are read at the tool's first call, once per container, and `make
    check`, the build and the deploy's preflight hold every stage's values against the class first.
    """
    for _, dependency in dependencies:
        if not isinstance(dependency, type) or getattr(dependency, "__pydantic_complete__", True):
            continue  # a Secret or Parameter, or a Settings class pydantic finished
        # A misspelt type in a Settings field, under postponed annotations, would otherwise
        # surface as pydantic's "not fully defined; call model_rebuild()" at the tool's first
        # call: advice meant for pydantic's own users, at a line that is not the mistake's.
        from median_lambda.authoring.registration import unresolved_annotation

        unresolved = unresolved_annotation(dependency)
        if unresolved is not None:
            place = unresolved[0] or _declared_at(function)
            raise ToolDefinitionError(place, f"{unresolved[1]} (taken by {_named(function)})")


# `@tool()`, with no risk: told apart from a risk given, so the message can name the function.
_NO_RISK: Any = object()


def tool(
    risk: str = _NO_RISK,
    name: str | None = None,
    description: str | None = None,
    *,
    idempotent: bool = True,
) -> Callable[[F], F]:
    """Serve the decorated function as a Median tool. It may be `def` or `async def`.

    risk: "low", "medium", "reviewed" or "high" (what each means is in docs/protocol.md).
    name: defaults to the function's name in camelCase.
    description: defaults to the function's docstring; the agent reads it to decide when to call.
    idempotent: False makes every call run, even a retry with the same callId, and no call of it
        touch the idempotency table: only for a pure read (docs/writing-tools.md).
    """
    if callable(risk):
        # `@tool` without parentheses: Python hands the function over as the risk, and the tool would vanish.
        raise ToolDefinitionError(_declared_at(risk), f"@tool on {_named(risk)} needs the tool's risk: {_RISK_HINT}")

    def register(function: F) -> F:
        def refused(problem: str) -> ToolDefinitionError:
            return ToolDefinitionError(_declared_at(function), f"@tool on {_named(function)} {problem}")

        if risk is _NO_RISK:
            raise refused(f"needs the tool's risk: {_RISK_HINT}")
        if not isinstance(risk, str):
            raise refused(f"was given risk={risk!r}, which is not a string; {_RISK_HINT}")
        for option, value in (("name", name), ("description", description)):
            if value is not None and not isinstance(value, str):
                raise refused(f"was given {option}={value!r}; {option} is a string, or left out")
        if not isinstance(idempotent, bool):
            raise refused(f"was given idempotent={idempotent!r}; write idempotent=True or idempotent=False")
        if not callable(function):
            raise refused("is not on a function: put @tool(...) on the line above a def")
        model_parameter, model, context_parameter, dependencies = _parameters(function)
        _check_dependencies(function, dependencies)
        told = description if description is not None else inspect.cleandoc(function.__doc__ or "")
        if not told.strip():
            # Median refuses a whole manifest over one tool without a description: said here, at the
            # author's line, on every path (make check, the build, GET, make serve, a test run).
            raise refused(
                "has no description: write a docstring saying what the tool does (the agent reads it to decide "
                'when to call the tool), or give @tool(description="...")'
            )
        registry.tools.append(
            Tool(
                name=name if name is not None else camel_case(function.__name__),
                description=told,
                risk=risk,
                input_model=_closed(model),
                function=function,
                model_parameter=model_parameter,
                context_parameter=context_parameter,
                idempotent=idempotent,
                dependencies=dependencies,
                is_async=inspect.iscoroutinefunction(function),
                # Kept raw: made readable (~10-50 us of path work) only when a problem names it.
                declared=_declaration(function),
            )
        )
        return function

    return register


def diagnostics[F: "Callable[..., Any]"](function: F | None = None) -> F:
    """Mark the function the `diagnostics` op runs: at most one per endpoint. It may take a ToolContext.

    Written without parentheses: `@diagnostics`. It may be `def` or `async def`.
    """
    if function is None or not callable(function):
        # `@diagnostics()` or `@diagnostics(something)`: the function comes only when the result is applied.
        given = "" if function is None else repr(function)
        location = _declared_at()

        def refuse(decorated: F) -> F:
            raise ToolDefinitionError(
                location,
                f"@diagnostics({given}) on {_named(decorated)}: write @diagnostics, without parentheses",
            )

        return typing.cast("F", refuse)

    def refused(problem: str) -> ToolDefinitionError:
        return ToolDefinitionError(_declared_at(function), f"{_named(function)}: {problem}")

    _refuse_generators(function, "a diagnostics function")
    # The op passes a ToolContext or nothing; refusing any other parameter here tells the
    # author at import time, rather than by a 500 on every diagnostics call.
    try:
        hints = typing.get_type_hints(function)
    except NameError as error:
        raise refused(f"an annotation cannot be resolved ({error}); import what it names") from None
    except Exception as error:
        raise refused(_unresolvable(error)) from None
    parameters = list(inspect.signature(function).parameters)
    for name in parameters:
        if hints.get(name) is not ToolContext:
            raise refused(
                f"parameter {name!r} must be annotated with ToolContext; a diagnostics function takes that or nothing"
            )
    if len(parameters) > 1:
        raise refused("takes at most one ToolContext parameter")
    registry.diagnostics.append(function)
    return function
