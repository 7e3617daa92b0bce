"""The cell fixture: module-scoped and parametrised over every registered cell, so pytest groups each
cell's checks and its compiled kernels and JAX compilations are shared by them."""

from __future__ import annotations

import pytest

from tests.conformance import cells


@pytest.fixture(scope="module", params=cells.params())
def cell(request) -> cells.Cell:
    return cells.cell(request.param)
