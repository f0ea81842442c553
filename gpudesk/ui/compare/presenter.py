"""The compare view's state and decisions, without widgets: what the editor shows when a scenario
is opened, the workload it stands for (through the shared workload rules), the title, picker and
subtitle that follow the comparison, the scenario document Save writes, and the table as text.
Tests drive it without a window; the panels only show what it decides."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path

from gpudesk.core import paths
from gpudesk.core.scenario import ScenarioError, load_scenario, parse_scenario
from gpudesk.core.workload import DEFAULTS, NormalisedWorkload, default_precision, normalise_workload

MAX_OPTIONS = 6
DEFAULT_SUBTITLE = "Two to six configurations for one workload; a winner per row."
KIND_LABELS = {"train": "Train from scratch", "finetune": "Fine-tune", "infer": "Serve (inference)"}
PRECISION_CHOICES = ("bf16", "fp16", "fp8", "fp32", "tf32", "int8", "int4", "q8", "q4", "fp4")
# the workload fields the editor shows; the others ride along unchanged
EDITOR_FIELDS = ("kind", "params", "tokens", "seq_len", "precision", "prompt_tokens", "output_tokens", "concurrency",
                 "preset")


def example_scenarios() -> list[tuple[str, Path]]:
    """The shipped example comparisons (the seeds' questions), by name."""
    out = []
    folder = paths.resource("examples")
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            scenario = load_scenario(path)
        except ScenarioError:
            continue
        if scenario.compare:
            out.append((scenario.name or path.stem, path))
    return out


def hardware_choices(catalogue) -> list[tuple[str, str, str]]:
    """What a configuration can be: (kind, id, label) for systems, accelerators and cloud offerings."""
    return (
        [("system", r["id"], f"{r['name']} (system)") for r in catalogue.items("systems")]
        + [("accelerator", r["id"], r["name"]) for r in catalogue.items("accelerators")]
        + [("cloud", r["id"], f"{r['provider']} {r['instance_type']} ({r.get('accelerator_count') or 1} × "
           f"{r['accelerator']}, ${r['usd_per_hour']:,.2f}/h)") for r in catalogue.items("cloud")]
    )


def editor_values(w: dict) -> dict:
    """The values the workload editor shows for a workload (the engine's defaults where it has none)."""
    kind = w.get("kind", "train")
    return {"kind": kind, "params": float(w.get("params", 1e9)), "tokens": float(w.get("tokens") or 0.0),
            "seq_len": int(w.get("seq_len", DEFAULTS["seq_len"])),
            "precision": w.get("precision") or default_precision(kind),
            "prompt_tokens": int(w.get("prompt_tokens", DEFAULTS["prompt_tokens"])),
            "output_tokens": int(w.get("output_tokens", DEFAULTS["output_tokens"])),
            "concurrency": int(w.get("concurrency", DEFAULTS["concurrency"]))}


def editor_extra(w: dict) -> dict:
    """The workload's fields the editor does not show (the model's shape, the plan): kept as they are."""
    return {k: v for k, v in w.items() if k not in EDITOR_FIELDS}


def workload_from_editor(values: dict, extra: dict, catalogue) -> NormalisedWorkload:
    """The workload the editor holds: its fields over the ones it keeps, through the shared rules."""
    w = dict(extra)
    w.update({k: values[k] for k in ("kind", "params", "seq_len", "precision")})
    if values["kind"] == "infer":
        w.update({k: values[k] for k in ("prompt_tokens", "output_tokens", "concurrency")})
    elif values["tokens"] > 0:
        w["tokens"] = values["tokens"]
    return normalise_workload(w, catalogue)


def signature(doc: dict) -> str:
    """The part of a comparison its question is about: the workload and the configurations."""
    return json.dumps([doc.get("workload"), doc.get("compare")], sort_keys=True, default=str)


@dataclass
class TitleDecision:
    question: str | None  # the title to show; None keeps the one shown
    preset_index: int  # the question picker's entry
    subtitle: str | None  # None keeps the one shown


class ComparePresenter:
    """What the compare view holds beyond its widgets, and the rules its title follows."""

    def __init__(self) -> None:
        self.base: dict = {}  # the scenario document's fields the editor does not show
        # The title: a question the user typed is kept; one gpudesk wrote (a preset's, or generated
        # from the workload and configurations) follows the comparison once it is edited away from
        # what was opened (`opened`: the workload and configurations as opened).
        self.question_auto = True
        self.from_preset = False
        self.preset_index = 0
        self.opened: str | None = None

    def begin_load(self, scenario, as_preset: bool) -> None:
        self.from_preset = as_preset
        self.opened = None  # taken by the first refresh, from the editor's own reading of the file
        self.question_auto = as_preset
        if not as_preset:
            self.preset_index = 0
        self.base = scenario.to_dict()

    @staticmethod
    def opened_workload(scenario, catalogue) -> NormalisedWorkload:
        """The workload a scenario stands for, its preset filled in, as the editor shows it."""
        return normalise_workload(dict(scenario.workload), catalogue)

    def question_typed(self, text: str) -> None:
        """Typed by the user: kept from now on; emptied: gpudesk writes it again."""
        self.question_auto = not text.strip()

    def follow(self, doc: dict, shown: str, generated: str) -> TitleDecision:
        """The title, the picker and the subtitle true to the comparison `doc` holds now."""
        sig = signature(doc)
        if self.opened is None:
            self.opened = sig
            if not self.from_preset:  # a saved file: its title is the user's unless gpudesk wrote it
                self.question_auto = shown.strip() in ("", generated)
        as_opened = sig == self.opened
        question = None
        if self.question_auto or not shown.strip():
            report = self.base.get("report") or {}
            text = (report.get("question") or self.base.get("name") or "") if (self.from_preset and as_opened) else ""
            text = text or generated
            question = text if text != shown else None
        subtitle = None
        if self.from_preset:
            subtitle = (self.base.get("description") or DEFAULT_SUBTITLE) if as_opened else DEFAULT_SUBTITLE
        return TitleDecision(question, self.preset_index if (self.from_preset and as_opened) else 0, subtitle)

    def scenario(self, question: str, workload: dict, options: list[dict], site: dict, finance: dict):
        """The editor's state as a scenario (also what Save writes); `site` and `finance` hold the
        editor's own fields, with None for one it leaves out."""
        doc = dict(self.base) if self.base else {}
        doc["gpudesk_scenario"] = 1
        doc["name"] = question.strip() or "Comparison"
        doc["workload"] = workload
        doc.pop("cluster", None)
        doc["compare"] = options
        if self.from_preset and self.opened is not None and signature(doc) != self.opened:
            doc.pop("description", None)  # the preset's description no longer describes this comparison
        doc["site"] = _merged(doc.get("site"), site)
        doc["finance"] = _merged(doc.get("finance"), finance)
        doc["report"] = {**(doc.get("report") or {}), "question": question.strip() or "Which configuration?"}
        return parse_scenario(json.loads(json.dumps(doc)), "the compare view")


def _merged(stored: dict | None, shown: dict) -> dict:
    out = dict(stored or {})
    for key, value in shown.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def table_text(comp) -> tuple[str, str]:
    """The comparison table as tab-separated text and as an HTML table (winners starred)."""
    header = ["Metric", "Better"] + comp.names
    lines = ["\t".join(header)]
    rows_html = ["<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"]
    for row in comp.rows:
        cells = [row.label + (f" ({row.unit})" if row.unit else ""), row.better or ""]
        cells += [("★ " if i in row.winners else "") + c.text.replace("\n", " ") for i, c in enumerate(row.cells)]
        lines.append("\t".join(cells))
        rows_html.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    return "\n".join(lines) + "\n", "<table>" + "".join(rows_html) + "</table>"


def details_html(comp, muted: str) -> str:
    """The Assumptions and sources tab (`muted`: the colour of each source's figures)."""
    parts = ["<h3>Assumptions</h3><ul>"]
    parts += [f"<li>{escape(a)}</li>" for a in comp.assumptions]
    parts.append("</ul><h3>Notes</h3><ul>")
    for r in comp.results:
        for note in (r.estimate.note_texts() if r.estimate else []) + ([r.error] if r.error else []):
            parts.append(f"<li><b>{escape(r.name)}:</b> {escape(note)}</li>")
    parts.append("</ul><h3>Sources</h3><ol>")
    for s in comp.sources:
        url = escape(s.get("url") or "", quote=True)
        parts.append(f"<li><a href='{url}'>{escape(s['title'])}</a> — {escape(s.get('publisher') or '')}, "
                     f"{escape(s.get('date') or 'undated')}<br><span style='color:{muted}'>"
                     f"{escape('; '.join(s.get('figures') or []))}</span></li>")
    parts.append("</ol>")
    return "".join(parts)
