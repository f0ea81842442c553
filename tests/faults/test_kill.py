"""SIGKILL of a real process at many points of a benchmark import, a catalogue upgrade and a
scenario save: afterwards the database passes PRAGMA integrity_check and holds all or none of
each file's rows, the catalogue is wholly the old or wholly the new version, and the scenario
file holds the old or the new text, never a mix; the next run finishes the job."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gpudesk.core.catalogue import backup

from ._util import (
    DATA,
    DRIVER,
    IMPORT_FILES,
    ROOT,
    env_for,
    imported_files,
    integrity,
    kill_points,
    killed,
    no_traceback,
    query,
    run_driver,
    run_gpudesk,
    steps_of,
    user_rows,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

KILLS = 4  # kill points per operation here (each a process start); tests/bench/fault_check.py sweeps more


def _parallel(fn, items):
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(fn, items))


# ============================================================================ benchmark import
def test_kill_during_an_import_leaves_each_file_all_or_nothing(home_with):
    reference = home_with()
    template_rows = user_rows(reference / "gpudesk.sqlite3")
    before = imported_files(reference / "gpudesk.sqlite3")
    total = steps_of(run_driver(reference, "cli", "import", *IMPORT_FILES))
    expected = imported_files(reference / "gpudesk.sqlite3")
    names = [p.name for p in IMPORT_FILES]
    assert all(expected[n][0] == expected[n][1] > 0 for n in names)  # every file stored rows

    def trial(step: int):
        home = home_with()
        return step, home, run_driver(home, "cli", "import", *IMPORT_FILES, kill_at=step)

    outcomes = set()
    for step, home, result in _parallel(trial, kill_points(total, KILLS)):
        db = home / "gpudesk.sqlite3"
        assert killed(result), (step, result.returncode, result.stderr[-500:])
        assert integrity(db) == ["ok"], step
        found = imported_files(db)
        landed = [n for n in names if n in found]
        assert landed == names[: len(landed)], f"step {step}: files landed out of order: {landed}"
        for name in landed:
            assert found[name] == expected[name], f"step {step}: {name} holds {found[name]}, not {expected[name]}"
        assert {k: v for k, v in found.items() if k not in names} == before
        assert user_rows(db) == template_rows
        outcomes.add(len(landed))
        if step == max(kill_points(total, KILLS)):  # the next run imports what the killed one did not, once
            again = run_gpudesk(home, "import", *IMPORT_FILES)
            assert again.returncode == 0 and no_traceback(again), again.stderr
            assert imported_files(db) == expected, step
    assert 0 in outcomes and len(outcomes) >= 2  # the kills fell before and inside the import


# ============================================================================ catalogue upgrade
OLD_P100, NEW_P100 = 250, 251
OLD_MI250X, NEW_MI250X = 560, 561


@pytest.fixture(scope="module")
def newer_data(tmp_path_factory) -> tuple[Path, str, str]:
    """data/ with a newer catalogue version and two figures changed, in two files."""
    data = tmp_path_factory.mktemp("newer") / "data"
    shutil.copytree(DATA, data)
    toml = data / "catalogue.toml"
    old_version = toml.read_text().split('version = "', 1)[1].split('"', 1)[0]
    new_version = "2099.1.1"
    toml.write_text(toml.read_text().replace(f'version = "{old_version}"', f'version = "{new_version}"', 1))
    for name, old, new in (("nvidia-datacenter.toml", OLD_P100, NEW_P100), ("other-vendors.toml", OLD_MI250X, NEW_MI250X)):
        path = data / "accelerators" / name
        assert f"tdp_w = {old}\n" in path.read_text()
        path.write_text(path.read_text().replace(f"tdp_w = {old}\n", f"tdp_w = {new}\n", 1))
    return data, old_version, new_version


def _catalogue_state(db: Path) -> tuple[str, int, int]:
    meta = dict(query(db, "SELECT key, value FROM catalogue_meta"))
    p100 = query(db, "SELECT tdp_w FROM accelerators WHERE id = 'p100-pcie-16gb'")[0][0]
    mi250x = query(db, "SELECT tdp_w FROM accelerators WHERE id = 'mi250x'")[0][0]
    return meta["version"], p100, mi250x


def test_kill_during_a_catalogue_upgrade_leaves_the_old_or_the_new_catalogue(home_with, newer_data):
    data, old_version, new_version = newer_data
    reference = home_with()
    template_rows = user_rows(reference / "gpudesk.sqlite3")
    assert _catalogue_state(reference / "gpudesk.sqlite3") == (old_version, OLD_P100, OLD_MI250X)
    total = steps_of(run_driver(reference, "upgrade", data))
    assert _catalogue_state(reference / "gpudesk.sqlite3") == (new_version, NEW_P100, NEW_MI250X)

    def trial(step: int):
        home = home_with()
        return step, home, run_driver(home, "upgrade", data, kill_at=step)

    outcomes = set()
    for step, home, result in _parallel(trial, kill_points(total, KILLS)):
        db = home / "gpudesk.sqlite3"
        assert killed(result), (step, result.returncode, result.stderr[-500:])
        assert integrity(db) == ["ok"], step
        state = _catalogue_state(db)
        assert state in ((old_version, OLD_P100, OLD_MI250X), (new_version, NEW_P100, NEW_MI250X)), (step, state)
        assert user_rows(db) == template_rows, step
        for info in backup.list_backups(db):  # a backup cut short is never listed as one
            assert info.readable and backup.check_file(info.path) is None, (step, info.name)
            assert user_rows(info.path) == template_rows
        outcomes.add(state[0])
        if step == max(kill_points(total, KILLS)):  # the next start finishes the upgrade
            finished = run_driver(home, "upgrade", data)
            assert finished.returncode == 0, finished.stderr
            assert _catalogue_state(db) == (new_version, NEW_P100, NEW_MI250X)
            assert user_rows(db) == template_rows
    # the upgrade's COMMIT is its last statement, so a kill leaves the old catalogue (the reference
    # run, not killed, left the new one)
    assert old_version in outcomes


# ============================================================================ scenario save
EXAMPLES = ROOT / "resources" / "examples"
OLD_SCENARIO = EXAMPLES / "a100-vs-rtx4090-laptop.json"
NEW_SCENARIO = EXAMPLES / "llama3-70b-serving-20-users.json"


def _saved_texts(tmp_path: Path) -> tuple[bytes, bytes]:
    """The bytes save_scenario writes for the old and the new scenario."""
    from gpudesk.core.scenario import load_scenario, save_scenario

    texts = []
    for i, path in enumerate((OLD_SCENARIO, NEW_SCENARIO)):
        out = tmp_path / f"reference-{i}.json"
        save_scenario(load_scenario(path), out)
        texts.append(out.read_bytes())
    assert texts[0] != texts[1]
    return texts[0], texts[1]


@pytest.mark.parametrize(("point", "new"), [("before-write", False), ("mid-write", False), ("after-fsync", False),
                                            ("after-replace", True)])
def test_kill_during_a_scenario_save_leaves_the_old_or_the_new_file(tmp_path, point, new):
    old_bytes, new_bytes = _saved_texts(tmp_path)
    target = tmp_path / "plan.json"
    target.write_bytes(old_bytes)
    result = run_driver(tmp_path, "save", target, NEW_SCENARIO, point)
    assert killed(result), result.stderr
    assert target.read_bytes() == (new_bytes if new else old_bytes)


def test_kill_after_random_delays_during_repeated_saves_never_leaves_a_partial_file(tmp_path):
    old_bytes, new_bytes = _saved_texts(tmp_path)
    rng = random.Random(13)
    target = tmp_path / "plan.json"
    target.write_bytes(old_bytes)
    from gpudesk.core.scenario import load_scenario

    for trial in range(4):
        proc = subprocess.Popen([sys.executable, str(DRIVER), "--ready", "save-loop", str(target), str(OLD_SCENARIO),
                                 str(NEW_SCENARIO)], env=env_for(tmp_path), cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.4))
            proc.kill()
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            proc.stderr.close()
        assert proc.returncode == -9
        assert target.read_bytes() in (old_bytes, new_bytes), f"trial {trial}: a partial file"
        load_scenario(target)  # and it loads
