"""Engine tests need no workbook state: replace the suite-wide autouse fixture with a no-op."""

import pytest


@pytest.fixture(autouse=True)
def isolated_state(tmp_path):
    yield tmp_path
