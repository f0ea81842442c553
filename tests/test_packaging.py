"""The Linux installer: packaging/build_linux.sh freezes gpudesk and builds the .deb; the .deb is
unpacked into a temporary root (`dpkg-deb -x`, no system install) and the installed copy runs.

Slow: about 3 to 5 minutes on 2 cores (PyInstaller ~40 s, xz compression of the .deb 1–2 min).
`pytest -m "not packaging"` leaves it out. Skipped only where dpkg-deb is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from gpudesk import __version__

from .conftest import ROOT

pytestmark = pytest.mark.packaging

APP = "gpudesk"
DEPENDS = ("libgl1", "libegl1", "libxcb1", "libfontconfig1", "libxkbcommon0", "libdbus-1-3")
XCB_HELPERS = ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0")


def _mib(path: Path) -> float:
    if path.is_dir():
        return sum(f.lstat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20
    return path.stat().st_size / 2**20


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Run build_linux.sh with this interpreter into a temporary build/ and dist/."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb not found: not a Debian-based system, so the .deb cannot be built here")
    work = tmp_path_factory.mktemp("packaging")
    env = {**os.environ, "PYTHON": sys.executable, "BUILD_DIR": str(work / "build"),
           "DIST_DIR": str(work / "dist"), "LINTIAN": "0"}
    env.pop("GPUDESK_HOME", None)
    result = subprocess.run(["bash", str(ROOT / "packaging" / "build_linux.sh")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    assert result.returncode == 0, f"build_linux.sh failed:\n{result.stdout[-6000:]}"
    dist = work / "dist"
    debs = sorted(dist.glob(f"{APP}_{__version__}_*.deb"))
    tars = sorted(dist.glob(f"{APP}-{__version__}-linux-*.tar.gz"))
    assert len(debs) == 1 and len(tars) == 1, sorted(p.name for p in dist.iterdir())
    return {"bundle": dist / APP, "deb": debs[0], "tar": tars[0], "log": result.stdout}


@pytest.fixture(scope="module")
def root(build, tmp_path_factory):
    """The .deb's payload unpacked into a temporary root, and its control files beside it."""
    target = tmp_path_factory.mktemp("deb-root")
    subprocess.run(["dpkg-deb", "-x", str(build["deb"]), str(target)], check=True, timeout=600)
    subprocess.run(["dpkg-deb", "-e", str(build["deb"]), str(target / "DEBIAN")], check=True, timeout=60)
    return target


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.rglob("*")}


def _run_installed(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(GPUDESK_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    return subprocess.run([str(root / "opt" / APP / APP), *args], cwd=home, env=env, capture_output=True,
                          text=True, timeout=300)


def test_deb_payload(build, root, capsys):
    exe = root / "opt" / APP / APP
    assert exe.is_file() and os.access(exe, os.X_OK)
    link = root / "usr" / "bin" / APP
    assert link.is_symlink() and os.readlink(link) == f"/opt/{APP}/{APP}"
    internal = root / "opt" / APP / "_internal"
    assert (internal / "data" / "catalogue.toml").is_file()
    assert (internal / "resources" / "examples" / "nanochat-d20-8xh100.json").is_file()
    migrations = internal / "gpudesk" / "core" / "catalogue" / "migrations"
    assert (migrations / "env.py").is_file() and (migrations / "script.py.mako").is_file()
    assert {p.name for p in (migrations / "versions").glob("*.py")} == {
        p.name for p in (ROOT / "gpudesk" / "core" / "catalogue" / "migrations" / "versions").glob("*.py")}
    assert not list((root / "opt" / APP).rglob("__pycache__"))

    desktop = root / "usr" / "share" / "applications" / f"{APP}.desktop"
    text = desktop.read_text()
    assert re.search(r"^Exec=gpudesk\b", text, re.M) and re.search(r"^Icon=gpudesk$", text, re.M)
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    icons = root / "usr" / "share" / "icons" / "hicolor"
    sizes = [int(p.stem.rsplit("-", 1)[1]) for p in (ROOT / "resources" / "icons").glob("gpudesk-*.png")]
    assert sizes
    for size in sizes:
        assert (icons / f"{size}x{size}" / "apps" / f"{APP}.png").is_file(), size
    assert (icons / "scalable" / "apps" / f"{APP}.svg").is_file()
    assert (root / "usr" / "share" / "lintian" / "overrides" / APP).is_file()

    control = (root / "DEBIAN" / "control").read_text()
    fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", control, re.M))
    assert fields["Package"] == APP and fields["Version"] == __version__
    depends = [d.split()[0] for d in fields["Depends"].split(", ")]
    recommends = [d.split()[0] for d in fields["Recommends"].split(", ")]
    assert set(DEPENDS) <= set(depends), depends
    assert set(XCB_HELPERS) <= set(recommends), recommends
    for script in ("postinst", "postrm"):
        assert os.access(root / "DEBIAN" / script, os.X_OK), script

    with tarfile.open(build["tar"]) as tar:
        member = tar.getmember(f"{APP}-{__version__}/{APP}")
        assert member.isfile() and member.mode & 0o111

    with capsys.disabled():
        print(f"\n  bundle {_mib(build['bundle']):.0f} MiB ({sum(1 for _ in build['bundle'].rglob('*'))} entries), "
              f".deb {_mib(build['deb']):.1f} MiB, tar.gz {_mib(build['tar']):.1f} MiB")


def test_installed_copy_passes_its_self_test(root, gpudesk_home):
    home = gpudesk_home  # conftest's empty, per-test GPUDESK_HOME
    before = _files(root / "opt" / APP)
    result = _run_installed(root, home, "--self-test")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "self-test (frozen" in result.stdout, output
    found = re.search(r"^ok   catalogue: (\d+) accelerators, version (\S+)", result.stdout, re.M)
    assert found and int(found.group(1)) >= 45, output
    report = json.loads((home / "self-test.json").read_text())
    assert report["ok"] and report["frozen"] and report["failed"] == []
    assert Path(report["bundled_data_dir"]) == root / "opt" / APP / "_internal" / "data"
    assert {c["name"] for c in report["checks"]} >= {"catalogue", "main window", "pages", "chart", "pdf"}
    assert (home / "gpudesk.sqlite3").is_file()  # the database lives in the user's folder...
    assert _files(root / "opt" / APP) == before  # ...and nothing was written into the installed copy


def test_installed_copy_lists_the_catalogue(root, gpudesk_home):
    result = _run_installed(root, gpudesk_home, "catalogue", "list", "--kind", "accelerators", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    entries = json.loads(result.stdout)
    assert len(entries) >= 45
    assert all(e.get("id") for e in entries)
    version = _run_installed(root, gpudesk_home, "--version")
    assert version.stdout.strip() == f"{APP} {__version__}"


def test_the_installer_workflow_parses_names_existing_scripts_and_builds_on_three_systems():
    """The GitHub Actions workflow that builds the installers: valid YAML, every script or file its
    steps run exists in the repository, and its matrix builds on Linux, Windows and macOS."""
    import re

    import yaml

    root = Path(__file__).resolve().parents[1]
    workflow = root / "packaging" / "github" / "workflows" / "build.yml"
    doc = yaml.safe_load(workflow.read_text())
    jobs = doc["jobs"]
    assert jobs, "no job"
    systems = set()
    for job in jobs.values():
        for entry in job.get("strategy", {}).get("matrix", {}).get("include", []):
            systems.add(entry["os"].split("-")[0])
        for step in job["steps"]:
            for path in re.findall(r"packaging[/\\][\w./\\-]+", step.get("run", "")):
                clean = path.replace("\\", "/").rstrip(".")
                assert (root / clean).exists(), f"step {step.get('name')!r} runs {clean}, which does not exist"
    assert {"ubuntu", "windows", "macos"} <= systems, systems
