"""`python -m median_lambda`: the protocol from the command line. See `python -m median_lambda --help`."""

from __future__ import annotations

from median_lambda.cli.commands import main

raise SystemExit(main())
