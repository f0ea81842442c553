"""The reports a user has written: where each PDF went, what it answered, with which catalogue,
and the scenario behind it (kept beside the history, so a report can be reopened or written
again with today's figures). The Reports view lists them; the compare view, the cluster canvas
and `gpudesk compare --pdf` add to them.

The history is one JSON file in the data folder, written atomically. A damaged file is reported
(place and problem) and left as it is; nothing is recorded over it until it is fixed or removed."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path

from gpudesk.core import paths
from gpudesk.core.fileio import atomic_write_text

log = logging.getLogger(__name__)

HISTORY_NAME = "reports.json"
SCENARIO_FOLDER = "reports"
KEEP = 500  # newest entries kept
KINDS = ("comparison", "cluster")


class HistoryError(ValueError):
    """The history file cannot be read; the message names the file and the problem."""


@dataclass
class ReportRecord:
    id: str
    path: str  # the PDF
    title: str
    question: str
    kind: str  # comparison | cluster
    created: str  # ISO date and time, local
    catalogue_version: str
    options: list[str] = field(default_factory=list)
    recommendation: str = ""
    page_size: str = "A4"
    scenario_path: str = ""  # the scenario behind the report, saved beside the history
    origin: str = "app"  # app | cli

    def exists(self) -> bool:
        return Path(self.path).is_file()

    def to_json(self) -> dict:
        return asdict(self)


def history_path() -> Path:
    return paths.data_dir() / HISTORY_NAME


def load_history(path: Path | None = None) -> list[ReportRecord]:
    """Newest first. Raises HistoryError naming the file, the entry and the problem."""
    path = path or history_path()
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise HistoryError(f"{path}: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("reports"), list):
        raise HistoryError(f"{path}: expected an object with a list 'reports'")
    names = {f.name for f in fields(ReportRecord)}
    required = {"id", "path", "title", "question", "kind", "created", "catalogue_version"}
    out = []
    for i, raw in enumerate(data["reports"]):
        where = f"{path}: reports[{i}]"
        if not isinstance(raw, dict):
            raise HistoryError(f"{where}: expected an object")
        unknown = set(raw) - names
        if unknown:
            raise HistoryError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        missing = required - set(raw)
        if missing:
            raise HistoryError(f"{where}: missing {', '.join(sorted(missing))}")
        for key, value in raw.items():
            wanted = list if key == "options" else str
            if not isinstance(value, wanted) or (key == "options" and not all(isinstance(v, str) for v in value)):
                raise HistoryError(f"{where}.{key}: expected {'a list of text' if wanted is list else 'text'}")
        if raw["kind"] not in KINDS:
            raise HistoryError(f"{where}.kind: '{raw['kind']}' is not one of {', '.join(KINDS)}")
        out.append(ReportRecord(**raw))
    out.sort(key=lambda r: r.created, reverse=True)
    return out


def _write(records: list[ReportRecord], path: Path) -> None:
    doc = {"gpudesk_reports": 1, "reports": [r.to_json() for r in records[:KEEP]]}
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def record_report(pdf_path: str | Path, *, title: str, question: str, catalogue_version: str,
                  recommendation: str = "", options=(), scenario=None, kind: str = "comparison",
                  page_size: str = "A4", origin: str = "app", path: Path | None = None) -> ReportRecord:
    """Add a written report to the history; the scenario, when given, is saved beside the
    history so that the report can be reopened or written again with today's catalogue."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    path = path or history_path()
    records = load_history(path)  # a damaged history raises here: nothing is written over it
    record_id = uuid.uuid4().hex[:12]
    scenario_path = ""
    if scenario is not None:
        from gpudesk.core.scenario import save_scenario

        target = path.parent / SCENARIO_FOLDER / f"{record_id}.json"
        save_scenario(scenario, target)
        scenario_path = str(target)
    record = ReportRecord(
        id=record_id,
        path=str(Path(pdf_path).resolve()),
        title=title,
        question=question,
        kind=kind,
        created=datetime.now().astimezone().isoformat(timespec="seconds"),
        catalogue_version=catalogue_version,
        options=[str(o) for o in options],
        recommendation=recommendation,
        page_size=page_size,
        scenario_path=scenario_path,
        origin=origin,
    )
    records.insert(0, record)
    _write(records, path)
    return record


def record_comparison(comparison, pdf_path: str | Path, *, title: str = "Compute procurement comparison",
                      kind: str = "comparison", page_size: str = "A4", origin: str = "app",
                      path: Path | None = None) -> ReportRecord:
    """Record a report written from a gpudesk.core.compare.Comparison."""
    return record_report(pdf_path, title=title, question=comparison.question,
                         catalogue_version=comparison.catalogue_version, recommendation=comparison.recommendation,
                         options=[r.name for r in comparison.results], scenario=comparison.scenario, kind=kind,
                         page_size=page_size, origin=origin, path=path)


def try_record_comparison(comparison, pdf_path, **kwargs) -> str:
    """record_comparison, for the places that have just written the PDF: "" when recorded, else
    why not (the PDF stays written; only the list of reports misses it)."""
    try:
        record_comparison(comparison, pdf_path, **kwargs)
    except (HistoryError, OSError) as exc:
        return str(exc)
    return ""


def forget_report(record_id: str, path: Path | None = None) -> bool:
    """Remove an entry (and its saved scenario) from the history; the PDF itself stays."""
    path = path or history_path()
    records = load_history(path)
    kept = [r for r in records if r.id != record_id]
    if len(kept) == len(records):
        return False
    gone = next(r for r in records if r.id == record_id)
    _write(kept, path)
    if gone.scenario_path:
        scenario = Path(gone.scenario_path)
        if scenario.parent == path.parent / SCENARIO_FOLDER:
            scenario.unlink(missing_ok=True)
    return True
