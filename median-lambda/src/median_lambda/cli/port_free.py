"""Stop before a server starts on a port something already listens on, saying which and what to run instead.

`median local start-api` checks its port with main(["3001", "PORT=3101 make start-api"]).
"""

from __future__ import annotations

import socket
import sys


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((host, port)) == 0


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[0].isdigit():
        print("usage: main([PORT, 'COMMAND WITH ANOTHER PORT'])", file=sys.stderr)
        return 2
    port, instead = int(argv[0]), argv[1]
    if port_in_use(port):
        print(
            f"Port {port} is already in use on 127.0.0.1 (a `make serve`, or another start-api?). "
            f"Stop it, or pick another port: {instead}",
            file=sys.stderr,
        )
        return 1
    return 0
