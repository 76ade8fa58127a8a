"""The pinned Copier and git, run on a template clone and its projects as a user runs them: each failure names
the command and what it said. `Terminal` runs one on a pseudo-terminal, for its prompts."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from typing import TYPE_CHECKING

from tests.project_copy import REPO

if TYPE_CHECKING:
    from pathlib import Path

COPIER = REPO / ".venv" / "copier" / "bin" / "copier"


def run(command: list[str], cwd: Path) -> str:
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("MAKE", "VIRTUAL_ENV"))}
    # These projects are copied to compare and merge files, never to install: the template's lock task skips.
    environment["MEDIAN_RENDER_ONLY"] = "1"
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, check=False)  # noqa: S603
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def git(cwd: Path, *arguments: str) -> str:
    return run(["git", "-c", "user.email=u@example.invalid", "-c", "user.name=u", *arguments], cwd)


def copier(cwd: Path, *arguments: str) -> str:
    """The pinned Copier, trusted and answering with the defaults (or the project's answers)."""
    return run([str(COPIER), *arguments, "--trust", "--defaults", "--quiet"], cwd)


def commit_all(cwd: Path, message: str) -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "--quiet", "-m", message)


class Terminal:
    """A command on a terminal of its own (a pseudo-terminal, as a user's shell gives Copier's prompts): what it
    shows, read as text, and keys sent to it."""

    _CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r")

    def __init__(self, command: list[str], cwd: Path, columns: int = 200) -> None:
        self._master, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        environment = {name: value for name, value in os.environ.items() if not name.startswith(("MAKE", "VIRTUAL"))}
        # prompt_toolkit asks a terminal where its cursor is and waits for the answer; this one never answers.
        environment |= {"MEDIAN_RENDER_ONLY": "1", "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
        self.process = subprocess.Popen(  # noqa: S603 - the pinned copier, with arguments of our own
            command, cwd=cwd, env=environment, stdin=child, stdout=child, stderr=child, start_new_session=True
        )
        os.close(child)
        self.shown = ""

    def expect(self, text: str, timeout: float = 30) -> str:
        """Wait until the terminal shows `text` (control sequences aside); all it showed up to then."""
        deadline = time.monotonic() + timeout
        while text not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"the terminal never showed {text!r}; it showed:\n{self.shown}"
            if not self._read(left):
                raise AssertionError(f"the command ended without showing {text!r}; it showed:\n{self.shown}")
        return self.shown

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exception: object) -> None:
        """The command stopped, if a failure left it waiting at a prompt, and its terminal closed."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        with contextlib.suppress(OSError):  # finish() closed it already
            os.close(self._master)

    def send(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def finish(self, timeout: float = 120) -> int:
        """Read to the end; the command's exit status."""
        deadline = time.monotonic() + timeout
        while self._read(max(deadline - time.monotonic(), 0.1)):
            assert time.monotonic() < deadline, f"the command never ended; it showed:\n{self.shown}"
        return self.process.wait(timeout=10)

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # the child closed its side: it ended
            return False
        self.shown += self._CONTROL.sub("", chunk.decode(errors="replace"))
        return bool(chunk)
