"""Project rules: the layer contracts hold, and CI runs exactly the README's test command."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_import_linter_contracts_hold():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    result = subprocess.run([lint, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: " in result.stdout and " broken" in result.stdout
    assert re.search(r"Contracts: \d+ kept, 0 broken", result.stdout), result.stdout


def test_ruff_finds_nothing():
    # the project's lint rules (pyproject.toml [tool.ruff]) run with the tests, so CI runs them
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, "check", "--no-cache", "gpudesk", "tests"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_class_over_300_lines_and_no_function_over_60():
    # the house rule (issue 16): a longer one says why on its def/class line, in a "# size:" comment
    import ast

    found = []
    for path in sorted((ROOT / "gpudesk").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                limit = 300 if isinstance(node, ast.ClassDef) else 60
                length = node.end_lineno - node.lineno + 1
                header = " ".join(lines[node.lineno - 1:(node.body[0].lineno if node.body else node.lineno)])
                if length > limit and "# size:" not in header:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert not found, "\n".join(found)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run the tests", 1)[1]
    command = re.search(r"```sh\n(.+?)\n```", section, re.S).group(1).strip()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert command in ci


def test_core_imports_without_qt():
    code = ("import sys, gpudesk.core.catalogue, gpudesk.core.estimate, gpudesk.cli;"
            "bad=[m for m in sys.modules if m.startswith(('PySide6','pyqtgraph'))];"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_bundled_files_are_found_through_paths_not_by_walking_up_from_a_module():
    """data/ and resources/ live beside the package in a checkout, in gpudesk/_bundled in a wheel and
    in the frozen app's folder: only gpudesk.core.paths knows which, so a module that walks up from
    its own file to data/ works in a checkout and fails once installed."""
    import re

    pattern = re.compile(r"parents?\[?\d*\]?\s*/\s*[\"'](data|resources)[\"']|\.parent\s*/\s*[\"'](data|resources)[\"']")
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "gpudesk").rglob("*.py")
             if p.name != "paths.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert not found, found
