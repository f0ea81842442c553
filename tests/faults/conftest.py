"""Fixtures of the fault tests: a database holding the bundled catalogue and a user's rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ._util import BENCH

# real logs imported before the faults (none of them is among _util.IMPORT_FILES)
EARLIER_IMPORTS = (BENCH / "nccl-tests" / "aws-k8s-tester_PR503_p5_mpirun-tag-output_FRAGMENT.txt",
                   BENCH / "mlperf-inference" / "v4.1_AMD_8xMI300X_llama2-70b-99_Offline_run_1_mlperf_log_summary.txt")


@pytest.fixture(scope="session")
def user_template(tmp_path_factory, catalogue_template) -> Path:
    """The bundled catalogue with a user's entries, quotes, an edited bundled row and an import."""
    from tests.test_data_safety import filled_database

    return filled_database(catalogue_template, tmp_path_factory.mktemp("faults-template"), EARLIER_IMPORTS)


@pytest.fixture
def home_with(user_template, tmp_path):
    """A fresh data folder holding a copy of the user template (call it for each trial)."""
    count = [0]

    def make() -> Path:
        count[0] += 1
        home = tmp_path / f"home-{count[0]}"
        home.mkdir()
        shutil.copy(user_template, home / "gpudesk.sqlite3")
        return home

    return make
