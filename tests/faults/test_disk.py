"""A full disk and a read-only data folder, made for real: a small tmpfs mounted in a private mount
namespace (`unshare --mount`, needs root; skipped elsewhere, where tests/test_data_safety.py's
simulated faults still run). gpudesk must say in one line which place has which problem, exit
with the fault's own status, print no traceback, and change nothing."""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudesk.cli import EXIT_DISK_FULL, EXIT_NOT_WRITABLE

from ._util import COMPARE_SCENARIO, NCCL, ROOT, imported_files, integrity, user_rows


def _can_mount() -> bool:
    if sys.platform != "linux" or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d"], capture_output=True)
    return probe.returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(), reason="needs a private mount namespace (root) to mount a tmpfs")


class Mounted:
    """Run gpudesk commands with GPUDESK_HOME on a fresh tmpfs of `size`; what each printed, its
    exit status and a copy of the folder afterwards come back (the mount goes with the namespace)."""

    def __init__(self, tmp_path: Path, files: dict[str, Path], size_kb: int = 4096, free_kb: int | None = None,
                 read_only: bool = False):
        self.tmp = tmp_path
        self.mount = tmp_path / "mnt"
        self.after = tmp_path / "after"
        self.files, self.size_kb, self.free_kb, self.read_only = files, size_kb, free_kb, read_only

    def run(self, *commands: list) -> list[tuple[int, str, str]]:
        q = shlex.quote
        lines = ["set -u", f"mkdir -p {q(str(self.mount))}",
                 f"mount -t tmpfs -o size={self.size_kb}k tmpfs {q(str(self.mount))} || exit 99"]
        lines += [f"cp {q(str(src))} {q(str(self.mount / name))}" for name, src in self.files.items()]
        if self.free_kb is not None:  # fill the disk, then free `free_kb`
            filler = q(str(self.mount / "filler"))
            lines += [f"dd if=/dev/zero of={filler} bs=4k 2>/dev/null", f"truncate -s -{self.free_kb}K {filler}"]
        if self.read_only:
            lines.append(f"mount -o remount,ro {q(str(self.mount))}")
        for i, argv in enumerate(commands):
            cmd = " ".join(q(str(a)) for a in [sys.executable, "-m", "gpudesk", *argv])
            out = self.tmp / f"out-{i}"
            lines.append(f"GPUDESK_HOME={q(str(self.mount))} QT_QPA_PLATFORM=offscreen {cmd} "
                         f">{q(str(out))}.stdout 2>{q(str(out))}.stderr; echo $? >{q(str(out))}.rc")
        lines.append(f"cp -a {q(str(self.mount))} {q(str(self.after))}")
        proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)],
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
        results = []
        for i in range(len(commands)):
            out = self.tmp / f"out-{i}"
            results.append((int(Path(f"{out}.rc").read_text()), Path(f"{out}.stdout").read_text(),
                            Path(f"{out}.stderr").read_text()))
        return results


def _one_line(err: str, *words: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err and all(w in err for w in words)


@needs_mount
def test_a_full_disk_stops_an_import_and_a_backup_with_one_line_and_changes_nothing(tmp_path, user_template):
    # 8 kB free: too little for SQLite's shared-memory file, which SQLite reports as a disk I/O
    # error (it once read as a damaged database); the repair below meets a plain SQLITE_FULL
    disk = Mounted(tmp_path, {"gpudesk.sqlite3": user_template}, free_kb=8)
    db = disk.mount / "gpudesk.sqlite3"
    results = disk.run(["import", NCCL], ["backups", "--now"])
    for code, _out, err in results:
        assert code == EXIT_DISK_FULL, err
        assert _one_line(err, "the disk is full"), err
    assert str(db) in results[0][2] and str(disk.mount) in results[1][2]
    kept = disk.after / "gpudesk.sqlite3"
    assert integrity(kept) == ["ok"]
    assert imported_files(kept) == imported_files(user_template)
    assert user_rows(kept) == user_rows(user_template)
    assert list((disk.after / "backups").glob("*")) == []  # no partial backup left
    assert sorted(p.name for p in disk.after.iterdir() if not p.name.startswith("gpudesk.sqlite3-")) == \
        ["backups", "filler", "gpudesk.sqlite3"]  # no temporary files left behind


@needs_mount
def test_a_full_disk_during_a_repair_leaves_the_damaged_file_in_place(tmp_path, user_template):
    damaged = tmp_path / "damaged.sqlite3"
    data = bytearray(user_template.read_bytes())
    data[4096 * 3: 4096 * 3 + 512] = bytes(512)  # a page of the schema's tables zeroed
    damaged.write_bytes(bytes(data))
    disk = Mounted(tmp_path, {"gpudesk.sqlite3": damaged}, free_kb=64)
    ((code, _out, err),) = disk.run(["repair", "--force"])
    assert code == EXIT_DISK_FULL, err
    assert _one_line(err, "the disk is full"), err
    assert (disk.after / "gpudesk.sqlite3").read_bytes() == bytes(data)
    assert not list(disk.after.glob("gpudesk.sqlite3.damaged-*"))


@needs_mount
def test_a_read_only_data_folder_says_so_in_one_line_and_changes_nothing(tmp_path, user_template):
    disk = Mounted(tmp_path, {"gpudesk.sqlite3": user_template}, read_only=True)
    results = disk.run(["import", NCCL], ["backups", "--now"], ["repair", "--force"])
    for code, _out, err in results:
        assert code == EXIT_NOT_WRITABLE, err
        assert _one_line(err, str(disk.mount), "writable"), err
    assert (disk.after / "gpudesk.sqlite3").read_bytes() == user_template.read_bytes()
    assert sorted(p.name for p in disk.after.iterdir()) == ["gpudesk.sqlite3"]


def test_a_full_disk_while_writing_a_csv_keeps_the_old_file(tmp_path, capsys, monkeypatch, catalogue):
    """The same fault simulated (the write's flush to disk fails with ENOSPC), on every platform."""
    from gpudesk.cli import main

    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "table.csv"
    target.write_bytes(b"configuration,cost\nold,1\n")

    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code = main(["compare", str(COMPARE_SCENARIO), "--csv", str(target)])
    err = capsys.readouterr().err
    assert code == EXIT_DISK_FULL and _one_line(err, "the disk is full"), err
    assert target.read_bytes() == b"configuration,cost\nold,1\n"
    assert [p.name for p in target.parent.iterdir()] == ["table.csv"]  # no temporary file left


@needs_mount
def test_a_read_only_data_folder_still_reads_the_catalogue_and_says_what_cannot_be_saved(tmp_path, user_template):
    disk = Mounted(tmp_path, {"gpudesk.sqlite3": user_template}, read_only=True)
    listed, shown, quoted = disk.run(["catalogue", "list", "--kind", "regions"],
                                     ["catalogue", "show", "h100-sxm5-80gb", "--json"],
                                     ["catalogue", "quote", "h100-sxm5-80gb", "25000"])
    code, out, err = listed
    assert code == 0, err
    assert "United States (national average)" in out
    assert _one_line(err, str(disk.mount / "gpudesk.sqlite3"), "opened read-only", "nothing can be saved"), err
    assert shown[0] == 0 and '"h100-sxm5-80gb"' in shown[1]
    code, _out, err = quoted  # a writing command: the existing one-line "cannot be written"
    assert code == EXIT_NOT_WRITABLE and _one_line(err, "cannot be written"), err
    assert (disk.after / "gpudesk.sqlite3").read_bytes() == user_template.read_bytes()
    assert sorted(p.name for p in disk.after.iterdir()) == ["gpudesk.sqlite3"]  # no journal, lock or backup left


@needs_mount
def test_the_app_opens_its_catalogue_view_on_a_read_only_data_folder(tmp_path, user_template):
    disk = Mounted(tmp_path, {"gpudesk.sqlite3": user_template}, read_only=True)
    ((code, _out, err),) = disk.run(["--quit-after-startup"])
    assert code == 0, err  # the populated window was painted (the run leaves at catalogueReady)
    assert "Traceback" not in err
    assert (disk.after / "gpudesk.sqlite3").read_bytes() == user_template.read_bytes()
