"""`python -m handler`: the protocol from the command line. See `python -m handler --help`."""

from __future__ import annotations

from handler.cli.commands import main

raise SystemExit(main())
