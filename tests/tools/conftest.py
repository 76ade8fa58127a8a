"""Fixtures for the tests of the example tools: make remove-examples deletes this file with them."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(autouse=True)
def sample_store() -> Iterator[None]:
    """The example tools change the in-memory orders; each test starts from the shipped ones."""
    from tools._sample_store import ORDERS

    saved = copy.deepcopy(ORDERS)
    try:
        yield
    finally:
        ORDERS.clear()
        ORDERS.update(saved)
