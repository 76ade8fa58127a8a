"""A crash, or the cause behind a ToolError, explained where its author works: the exception's
message and the author's frames, on stderr.

A tool that raises is answered 500 `internal_error` with a reference, and logged with its type
and the places it passed, never its message: messages quote customers' input, and a deployed
function's log is kept. On the author's own machine (`make serve`, `sam local`, the test client
in pytest) the same crash is printed in full on stderr, the terminal or the test's output, so
that the reference is not a mystery there. The answer carries the message nowhere.

A tool stopped at its deadline is answered 504 `timeout`, and a deployed function logs only that
it timed out; off Lambda, where it was when it was stopped is printed the same way
(`explain_timeout_locally`): the place its time limit's exception was raised, or, where the tool
ran in a worker thread it was left running in (`make serve` runs requests on threads of their
own), where that thread is now, read with `faulthandler`'s dump of the process's threads.

A tool that declines with `raise ToolError("...") from error` is answered with its own message;
the exception behind it (an AccessDenied, a botocore parameter error, a bug in the tool) is
logged by its type and the author's line it came through (`cause_summary`), and printed in full
off Lambda alike (`explain_cause_locally`). The cause is what Python's own traceback shows above
the ToolError: its `__cause__`, else the exception it was raised while handling (`__context__`),
unless the author wrote `from None`.
"""

from __future__ import annotations

import linecache
import sys
import sysconfig
import traceback
from pathlib import Path
from traceback import FrameSummary
from typing import TYPE_CHECKING

from median_lambda.runtime.env import package_directory, running_in_deployed_lambda, shown_path

if TYPE_CHECKING:
    import threading
    from typing import Any

# All of median_lambda/, not only this room: a frame in any of the framework's modules is not the author's.
_FRAMEWORK = Path(__file__).resolve().parents[1]
_STANDARD_LIBRARY = Path(sysconfig.get_paths()["stdlib"]).resolve()
# The last few explanations by reference, oldest first: a local process's, never a deployed one's.
_KEPT = 16
_recent: dict[str, str] = {}


def explain_locally(what: str, reference: str, error: BaseException, *, authors_frames_only: bool = True) -> None:
    """Print `what` crashed, with the exception and the frames from the author's code on, unless deployed.

    With authors_frames_only=False (a failure of the handler itself) every frame is shown.
    """
    if running_in_deployed_lambda():
        return
    text = _formatted(error, authors_frames_only=authors_frames_only)
    _keep(reference, text)
    sys.stderr.write(
        f"{what} crashed; its answer is 500 internal_error, reference {reference}. "
        "Here, not deployed, is why (a deployed function logs only the exception's type and place):\n" + text
    )
    sys.stderr.flush()


def explain_cause_locally(what: str, reference: str, declined: BaseException) -> None:
    """Print the exception behind a ToolError, and the ToolError it became, unless deployed."""
    if running_in_deployed_lambda():
        return
    text = _formatted(declined, authors_frames_only=True)
    _keep(reference, text)
    sys.stderr.write(
        f"{what} declined the call; its answer is its ToolError's message (tool_error), reference {reference}. "
        "Here, not deployed, is the exception behind it (a deployed function logs only its type and place, "
        "and the answer never carries it):\n" + text
    )
    sys.stderr.flush()


def explain_timeout_locally(
    what: str, reference: str, stopped: BaseException | None, left_in: threading.Thread | None
) -> None:
    """Print where a tool answered `504 timeout` was, from the author's code on, unless deployed: where
    `stopped` (its time limit's exception) was raised, else where the thread `left_in` runs it now."""
    if running_in_deployed_lambda():
        return
    if stopped is not None:
        frames = list(traceback.extract_tb(stopped.__traceback__))
        where = "where it was when it was stopped"
    elif left_in is not None:
        frames = _frames_of(left_in)
        where = "where it was at its deadline, in the thread it was left running in"
    else:
        return
    authors = _from_the_authors_code(frames)
    while authors and Path(authors[-1].filename).resolve().is_relative_to(_FRAMEWORK):
        authors.pop()  # the time limit's own frame, where its signal raised
    for frame in authors:
        frame.filename = shown_path(frame.filename)
    if not authors:
        return
    text = "Traceback (most recent call last):\n" + "".join(traceback.StackSummary.from_list(authors).format())
    _keep(reference, text)
    sys.stderr.write(
        f"{what} timed out; its answer is 504 timeout, reference {reference}. Here, not deployed, is {where} "
        "(a deployed function logs only that it timed out):\n" + text
    )
    sys.stderr.flush()


def _frames_of(thread: threading.Thread) -> list[FrameSummary]:
    """The frames `thread` runs now, outermost first, read from faulthandler's dump of every thread: the one
    way Python offers to read another thread's stack (a heading `Thread 0x<its ident>`, then a line
    `File "<path>", line <n> in <name>` a frame, innermost first)."""
    import faulthandler
    import re
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as dump:
        faulthandler.dump_traceback(dump, all_threads=True)
        dump.seek(0)
        lines = dump.read().splitlines()
    frames: list[FrameSummary] = []
    in_thread = False
    for line in lines:
        heading = re.search(r"thread 0x([0-9a-f]+)", line, re.IGNORECASE)
        if heading is not None:
            in_thread = int(heading.group(1), 16) == thread.ident
            continue
        place = re.fullmatch(r'\s*File "(.*)", line (\d+) in (.*)', line)
        if in_thread and place is not None:
            filename, number = place.group(1), int(place.group(2))
            frames.append(FrameSummary(filename, number, place.group(3), line=linecache.getline(filename, number)))
    frames.reverse()
    return frames


def cause_of(declined: BaseException) -> BaseException | None:
    """The exception behind `declined`, as Python's traceback shows it: raised `from` it, or while handling it."""
    if declined.__cause__ is not None:
        return declined.__cause__
    return None if declined.__suppress_context__ else declined.__context__


def cause_summary(declined: BaseException) -> dict[str, Any]:
    """What a deployed log may say of the cause behind `declined`: its type, the author's line it came
    through, and for an AWS error its code and operation; never its message, which may quote the input."""
    cause = cause_of(declined)
    if cause is None:
        return {}
    summary: dict[str, Any] = {
        "cause_type": type(cause).__name__,
        # An exception made but never raised has no traceback: the ToolError's line says where it was met.
        "cause_origin": origin(cause) or origin(declined) or "unknown",
    }
    # botocore's ClientError, read by its attributes: its code and operation are AWS's words, never the input.
    response = getattr(cause, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    operation = getattr(cause, "operation_name", None)
    if isinstance(code, str) and code:
        summary["aws_error_code"] = code
    if isinstance(operation, str) and operation:
        summary["aws_operation"] = operation
    return summary


def origin(error: BaseException) -> str | None:
    """The author's line `error` came through, as `tools/<file>.py:<line>`: the deepest frame of its traceback
    in the tools package, else outside the framework, the standard library and installed packages (a tool a
    test defines); None when it passed through none."""
    frames = traceback.extract_tb(error.__traceback__)
    tools = package_directory()
    in_tools = [frame for frame in frames if tools is not None and Path(frame.filename).is_relative_to(tools)]
    authors = in_tools or [frame for frame in frames if _written_by_the_author(frame.filename)]
    return f"{shown_path(authors[-1].filename)}:{authors[-1].lineno}" if authors else None


def _formatted(error: BaseException, *, authors_frames_only: bool) -> str:
    explained = traceback.TracebackException.from_exception(error)
    link: traceback.TracebackException | None = explained
    while link is not None:  # each exception of the chain: the cause, then the ToolError it became
        if authors_frames_only:
            link.stack = traceback.StackSummary.from_list(_from_the_authors_code(list(link.stack)))
        for frame in link.stack:
            frame.filename = shown_path(frame.filename)
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
    return "".join(explained.format())


def _keep(reference: str, text: str) -> None:
    _recent[reference] = text
    while len(_recent) > _KEPT:
        del _recent[next(iter(_recent))]


def explanation(reference: str) -> str | None:
    """The traceback printed for the crash, or the ToolError's cause, of the call answered under `reference`,
    while it is one of the last few: the inspector shows it beside the answer (devserver/inspector.py), which
    itself never carries it."""
    return _recent.get(reference)


def _from_the_authors_code(frames: list[FrameSummary]) -> list[FrameSummary]:
    """The frames from the first one outside the framework and the standard library (which call the tool) on;
    none when the failure never reached the author's code (their answer failed to serialise, say)."""
    for index, frame in enumerate(frames):
        if not _calls_the_tool(frame.filename):
            return frames[index:]
    return []


def _written_by_the_author(filename: str) -> bool:
    path = Path(filename)
    return not _calls_the_tool(filename) and not {"site-packages", "dist-packages"} & set(path.parts)


def _calls_the_tool(filename: str) -> bool:
    path = Path(filename).resolve()
    if path.is_relative_to(_FRAMEWORK):
        return True
    # A library the tool calls may be installed under the standard library's folder, in site-packages.
    return path.is_relative_to(_STANDARD_LIBRARY) and "site-packages" not in path.parts
