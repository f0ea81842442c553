"""Before the first window on Linux: whether Qt's X11 platform plugin can load, and if not which
system libraries are missing and how to install them. Qt itself only prints "Could not load the Qt
platform plugin xcb" and aborts the process, which a new user cannot act on.

The check loads the plugin the way Qt would (dlopen); only when that fails does it run `ldd` on it
to list every missing library, so a working start pays for one dlopen that Qt then reuses."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# library the xcb plugin needs -> (Debian/Ubuntu package, Fedora package); README's install section
# and the .deb's Depends name the same packages (tests/test_packaging.py keeps them in step)
PACKAGES = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
}


def wants_xcb(env=os.environ) -> bool:
    """Whether Qt will use its X11 plugin: Linux, an X display, and no other platform asked for."""
    platform = env.get("QT_QPA_PLATFORM", "")
    return sys.platform.startswith("linux") and bool(env.get("DISPLAY")) and platform in ("", "xcb")


def xcb_plugin() -> Path | None:
    try:
        import PySide6
    except ImportError:
        return None
    path = Path(PySide6.__file__).resolve().parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return path if path.exists() else None


def missing_libraries(plugin: Path) -> list[str]:
    """The libraries `plugin` needs that the system lacks ([] when it loads)."""
    import ctypes

    try:
        ctypes.CDLL(str(plugin))
        return []
    except OSError as exc:
        first = str(exc).split(":", 1)[0].strip()
    import subprocess

    try:
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    missing = [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]
    return missing or ([first] if first else ["(unknown)"])


def install_message(missing: list[str]) -> str:
    """What is missing and the install lines for Debian/Ubuntu and Fedora."""
    debian = sorted({PACKAGES.get(lib, (None, None))[0] for lib in missing} - {None})
    fedora = sorted({PACKAGES.get(lib, (None, None))[1] for lib in missing} - {None})
    lines = [f"gpudesk cannot open its window: Qt's X11 plugin needs {', '.join(missing)}, which this system lacks."]
    if debian:
        lines.append(f"  Debian/Ubuntu: sudo apt-get install {' '.join(debian)}")
    if fedora:
        lines.append(f"  Fedora:        sudo dnf install {' '.join(fedora)}")
    lines.append("  (the command line works without them: gpudesk --help)")
    return "\n".join(lines)


def check_platform(env=os.environ) -> str:
    """'' when the window can open, else the message to print instead of Qt's."""
    if not wants_xcb(env):
        return ""
    plugin = xcb_plugin()
    if plugin is None:
        return ""
    missing = missing_libraries(plugin)
    return install_message(missing) if missing else ""
