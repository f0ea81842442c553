"""The list of written reports: recorded by `gpudesk compare --pdf` and the views, read back,
forgotten; a damaged list is reported with its place and never written over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudesk.cli import main
from gpudesk.core.report.history import HistoryError, forget_report, history_path, load_history, record_report

from .conftest import ROOT

EXAMPLE = ROOT / "resources" / "examples" / "a100-vs-rtx4090-laptop.json"


def test_cli_pdf_is_recorded_with_its_scenario(catalogue, tmp_path, capsys):
    pdf = tmp_path / "laptop.pdf"
    assert main(["compare", str(EXAMPLE), "--pdf", str(pdf)]) == 0
    (record,) = load_history()
    assert record.path == str(pdf.resolve()) and record.exists()
    assert record.origin == "cli" and record.kind == "comparison"
    assert record.catalogue_version == catalogue.version
    assert len(record.options) >= 2 and record.recommendation
    saved = json.loads(Path(record.scenario_path).read_text(encoding="utf-8"))
    assert saved["compare"] and saved["gpudesk_scenario"] == 1
    assert forget_report(record.id)
    assert load_history() == []
    assert not Path(record.scenario_path).exists() and pdf.exists()  # the PDF itself stays


def test_newest_first_and_kinds_checked(gpudesk_home, tmp_path):
    a = record_report(tmp_path / "a.pdf", title="T", question="Q1", catalogue_version="1")
    b = record_report(tmp_path / "b.pdf", title="T", question="Q2", catalogue_version="1", kind="cluster")
    records = load_history()
    assert {r.id for r in records} == {a.id, b.id}
    assert records[0].created >= records[1].created
    assert {r.kind for r in records} == {"comparison", "cluster"}
    with pytest.raises(ValueError):
        record_report(tmp_path / "c.pdf", title="T", question="Q", catalogue_version="1", kind="poster")


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "line 1, column 2"),
    ('{"reports": {}}', "a list 'reports'"),
    ('{"reports": [1]}', "reports[0]: expected an object"),
    ('{"reports": [{"id": "x"}]}', "reports[0]: missing"),
    ('{"reports": [{"id": "x", "path": "p", "title": "t", "question": "q", "kind": "poster", "created": "c", '
     '"catalogue_version": "v"}]}', "reports[0].kind"),
    ('{"reports": [{"id": "x", "path": 3, "title": "t", "question": "q", "kind": "cluster", "created": "c", '
     '"catalogue_version": "v"}]}', "reports[0].path: expected text"),
])
def test_a_damaged_list_is_named_and_left_alone(gpudesk_home, tmp_path, content, problem):
    path = history_path()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(HistoryError) as info:
        load_history()
    assert str(path) in str(info.value) and problem in str(info.value)
    with pytest.raises(HistoryError):
        record_report(tmp_path / "a.pdf", title="T", question="Q", catalogue_version="1")
    assert path.read_text(encoding="utf-8") == content


def test_cli_still_writes_the_pdf_when_the_list_is_damaged(catalogue, tmp_path, capsys):
    history_path().write_text("{oops", encoding="utf-8")
    pdf = tmp_path / "x.pdf"
    assert main(["compare", str(EXAMPLE), "--pdf", str(pdf)]) == 0
    assert pdf.exists()
    assert "not added to the Reports list" in capsys.readouterr().err
