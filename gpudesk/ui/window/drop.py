"""Files dropped on the main window: scenarios open in Compare (or Cluster, when drawn there);
anything else is taken for benchmark results and opens the import."""

from __future__ import annotations


def open_dropped(window, paths: list[str]) -> None:
    scenarios = [p for p in paths if is_scenario(p)]
    results = [p for p in paths if p not in scenarios]
    for path in scenarios:
        open_scenario_file(window, path)
    if results:
        window.show_page("benchmarks").import_files(results)


def open_scenario_file(window, path: str) -> None:
    import json  # when a file is dropped, not in the window's first frame

    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        doc = {}
    key = "cluster" if isinstance(doc, dict) and doc.get("canvas") else "compare"
    view = window.show_page(key)
    if hasattr(view, "open_path"):
        view.open_path(path)


def is_scenario(path: str) -> bool:
    """A gpudesk scenario (its first bytes name the format), not a benchmark result."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"gpudesk_scenario"' in head
