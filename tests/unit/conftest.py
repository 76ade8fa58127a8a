from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from median_lambda.testing import Stack


@pytest.fixture(scope="session")
def stack() -> Stack:
    """template.yaml as CloudFormation will get it: SAM's translator, run offline, with the defaults."""
    from median_lambda.testing import translated

    return translated()
