"""A bare Linux without the X11 libraries Qt's xcb plugin needs gets the missing libraries and the
install lines instead of Qt's "Could not load the Qt platform plugin" and an abort (issue 31)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gpudesk.ui import platform_check as pc

ROOT = Path(__file__).resolve().parents[2]


def test_the_check_runs_only_where_qt_would_use_x11():
    assert pc.wants_xcb({"DISPLAY": ":0"}) is (pc.sys.platform.startswith("linux"))
    assert not pc.wants_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"})
    assert not pc.wants_xcb({"WAYLAND_DISPLAY": "wayland-0"})
    assert pc.check_platform({"QT_QPA_PLATFORM": "offscreen"}) == ""


def test_missing_libraries_are_named_with_their_packages(monkeypatch, tmp_path):
    import ctypes

    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")

    def no_cursor(_path):
        raise OSError("libxcb-cursor.so.0: cannot open shared object file: No such file or directory")

    ldd = ("\tlibxcb-cursor.so.0 => not found\n\tlibxkbcommon-x11.so.0 => not found\n"
           "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n")
    monkeypatch.setattr(ctypes, "CDLL", no_cursor)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, ldd, ""))
    assert pc.missing_libraries(plugin) == ["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"]
    text = pc.install_message(pc.missing_libraries(plugin))
    assert "needs libxcb-cursor.so.0, libxkbcommon-x11.so.0" in text
    assert "Debian/Ubuntu: sudo apt-get install libxcb-cursor0 libxkbcommon-x11-0" in text
    assert "Fedora:        sudo dnf install libxkbcommon-x11 xcb-util-cursor" in text


def test_this_machine_s_plugin_loads():
    plugin = pc.xcb_plugin()
    assert plugin is not None and pc.missing_libraries(plugin) == []


def test_the_readme_names_the_packages_the_plugin_needs_most_often():
    readme = (ROOT / "README.md").read_text()
    for lib in ("libxcb-cursor.so.0", "libxkbcommon-x11.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
        debian, fedora = pc.PACKAGES[lib]
        assert debian in readme and fedora in readme, lib


def test_the_deb_depends_and_the_check_name_the_same_packages():
    import re

    script = (ROOT / "packaging" / "build_linux.sh").read_text()
    depends = re.search(r"^Depends: (.+)$", script, re.MULTILINE).group(1)
    names = {re.split(r"[ (]", d.strip())[0] for d in depends.split(",")} - {"libc6"}
    known = {debian for debian, _fedora in pc.PACKAGES.values()}
    assert names and names <= known, names - known
