"""A crash explained where its author works: the exception's message and the author's frames, on stderr.

A tool that raises is answered 500 `internal_error` with a reference, and logged with its type
and the places it passed, never its message: messages quote customers' input, and a deployed
function's log is kept. On the author's own machine (`make serve`, `sam local`, the test client
in pytest) the same crash is printed in full on stderr, the terminal or the test's output, so
that the reference is not a mystery there. The answer carries the message nowhere.
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from handler.runtime.env import running_in_deployed_lambda, shown_path

if TYPE_CHECKING:
    from traceback import FrameSummary

# All of handler/, not only this room: a frame in any of the framework's modules is not the author's.
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
    explained = traceback.TracebackException.from_exception(error)
    if authors_frames_only:
        explained.stack = traceback.StackSummary.from_list(_from_the_authors_code(list(explained.stack)))
    for frame in explained.stack:
        frame.filename = shown_path(frame.filename)
    text = "".join(explained.format())
    _recent[reference] = text
    while len(_recent) > _KEPT:
        del _recent[next(iter(_recent))]
    sys.stderr.write(
        f"{what} crashed; its answer is 500 internal_error, reference {reference}. "
        "Here, not deployed, is why (a deployed function logs only the exception's type and place):\n" + text
    )
    sys.stderr.flush()


def explanation(reference: str) -> str | None:
    """The traceback printed for the crash answered under `reference`, while it is one of the last few: the
    inspector shows it beside the answer (devserver/inspector.py), which itself never carries it."""
    return _recent.get(reference)


def _from_the_authors_code(frames: list[FrameSummary]) -> list[FrameSummary]:
    """The frames from the first one outside the framework and the standard library (which call the tool) on;
    none when the failure never reached the author's code (their answer failed to serialise, say)."""
    for index, frame in enumerate(frames):
        if not _calls_the_tool(frame.filename):
            return frames[index:]
    return []


def _calls_the_tool(filename: str) -> bool:
    path = Path(filename).resolve()
    if path.is_relative_to(_FRAMEWORK):
        return True
    # A library the tool calls may be installed under the standard library's folder, in site-packages.
    return path.is_relative_to(_STANDARD_LIBRARY) and "site-packages" not in path.parts
