"""A report's content, independent of how it is drawn: the cover facts, the recommendation, tables,
chart series, assumptions and numbered sources. The PDF renderer (gpudesk.ui.render.pdf) draws it;
tests read it without Qt."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudesk import __version__


@dataclass
class Paragraph:
    text: str
    style: str = "body"  # body | lead | note


@dataclass
class Table:
    title: str
    columns: list[str]  # first column: the row label
    rows: list[list[str]]  # cell texts (may contain "\n")
    winners: list[list[int]] = field(default_factory=list)  # per row: winning column indexes (0 = first option)
    sections: list[str] = field(default_factory=list)  # per row: section name (a header row is drawn when it changes)
    directions: list[str] = field(default_factory=list)  # per row: "lower is better" / "higher is better" / ""
    note: str = ""


@dataclass
class BarChart:
    title: str
    categories: list[str]  # metrics
    series: list[tuple[str, list[float]]]  # (option, score per metric)
    caption: str = ""
    y_label: str = ""


@dataclass
class ScatterChart:
    title: str
    points: list[tuple[str, float, float]]  # (label, x, y)
    x_label: str
    y_label: str
    caption: str = ""


@dataclass
class LineChart:
    title: str
    xs: list[float]
    series: list[tuple[str, list[float], str]]  # (name, ys, kind: own | rent)
    x_label: str
    y_label: str
    markers: list[tuple[str, float, float]] = field(default_factory=list)  # (label, x, y)
    caption: str = ""


@dataclass
class CurveChart:
    """Curves of (x, y) points, one per option, each with its operating point marked."""

    title: str
    series: list[tuple[str, list[float], list[float]]]  # (name, xs, ys)
    x_label: str
    y_label: str
    markers: list[tuple[str, float, float]] = field(default_factory=list)  # (label, x, y)
    caption: str = ""


@dataclass
class TornadoChart:
    """Each input (a row, largest effect first) moved alone to the ends of its range: per option, the
    outcome at the two ends (a bar) and its likely value (a tick)."""

    title: str
    inputs: list[str]
    series: list[tuple[str, list[tuple[float, float]], float]]  # (option, (low, high) per input, likely)
    x_label: str
    caption: str = ""


@dataclass
class Figure:
    path: str  # an SVG (drawn as vectors) or a PNG
    caption: str = ""


@dataclass
class Bullets:
    items: list[str]


@dataclass
class SourceList:
    sources: list[dict]  # number, title, publisher, url, date, figures


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)
    new_page: bool = False  # start on a page of its own


@dataclass
class Report:
    title: str
    question: str
    subtitle: str
    date: str
    catalogue_version: str
    prices_as_of: str = ""  # the date whose prices the comparison uses (the report's date when empty)
    author: str = ""
    organisation: str = ""
    recommendation: str = ""
    highlights: list[tuple[str, str]] = field(default_factory=list)  # (label, value) on the cover
    sections: list[Section] = field(default_factory=list)
    app_version: str = __version__

    def text(self) -> str:
        """All the report's words in reading order (what a PDF text extraction should find)."""
        out = [self.title, self.question, self.subtitle, f"Prices as of {self.prices_as_of}", self.recommendation]
        for section in self.sections:
            out.append(section.title)
            for block in section.blocks:
                if isinstance(block, Paragraph):
                    out.append(block.text)
                elif isinstance(block, Table):
                    out.append(" ".join(block.columns))
                    out.extend(" ".join(row) for row in block.rows)
                elif isinstance(block, Bullets):
                    out.extend(block.items)
                elif isinstance(block, SourceList):
                    out.extend(f"[{s['number']}] {s['title']}" for s in block.sources)
        return "\n".join(out)


def comparison_report(comp, author: str = "", organisation: str = "") -> Report:
    """The procurement report of a comparison."""
    scenario = comp.scenario
    kind, what = _workload_words(comp)
    report = Report(
        title="Compute procurement comparison",
        question=comp.question,
        subtitle=(f"{len(comp.results)} configurations compared for {what}." if len(comp.results) != 1
              else f"Estimated for {what}."),
        date=comp.created,
        catalogue_version=comp.catalogue_version,
        prices_as_of=(scenario.finance or {}).get("as_of") or comp.created,
        author=author,
        organisation=organisation,
        recommendation=comp.recommendation,
    )
    # cover highlights: the winners of the rows that decide
    for key in ("time", "decode_user", "cost_run", "co2", "break_even_months"):
        row = comp.row(key)
        if row is None or not row.winners:
            continue
        i = row.winners[0]
        report.highlights.append((f"{row.label} ({row.direction_text})",
                                  f"{comp.results[i].name}: {row.cells[i].text.splitlines()[0]}"))
    report.sections.append(_configurations(comp))
    report.sections.append(Section("Comparison table", [_comparison_table(comp)]))
    charts = _charts(comp, kind)
    if charts.blocks:
        report.sections.append(charts)
    if comp.why is not None or comp.why_error:
        report.sections.append(_why_section(comp))
    report.sections.append(Section("Assumptions", [Bullets(comp.assumptions)]))
    report.sections.append(Section("Sources", [
        Paragraph("Every catalogue figure used above, with the document it comes from. Figures are dense peaks "
                  "(no structured sparsity) with the precision named; prices are dated.", "note"),
        SourceList(comp.sources),
    ]))
    return report


def _why_section(comp) -> Section:
    """What the recommendation rests on: the tornado of the deciding outcome, how often each option
    wins it, and each input's range and crossover."""
    why = comp.why
    if why is None:
        return Section("What the recommendation rests on", [Paragraph(comp.why_error, "note")])
    from gpudesk.core.defend import ROWS, value_text

    fmt = ROWS[why.row][2]
    shown = why.bars[:10]
    chart = TornadoChart(
        f"What moves {why.label.lower()}", [b.input.label for b in shown],
        [(name, [(b.at_low[c], b.at_high[c]) for b in shown], why.likely[c]) for c, name in enumerate(why.names)],
        f"{why.label} ({why.unit})",
        "Each input moved alone to the ends of its range, the others at their likely values; a tick marks each "
        "configuration's likely value. Largest effect at the top.")
    odds = " · ".join(f"{why.names[i]} {why.probabilities[i]:.0%}"
                      for i in sorted(range(len(why.names)), key=lambda i: -why.probabilities[i]))
    rows = [[b.input.label, f"{value_text(b.input, b.input.low)} – {value_text(b.input, b.input.high)}",
             "no value in range changes it" if b.crossover is None else
             f"{why.names[b.crossover.winner]} wins past {b.crossover.text}",
             "; ".join(f"{why.names[c]} {fmt(min(b.at_low[c], b.at_high[c]))}–{fmt(max(b.at_low[c], b.at_high[c]))}"
                       for c in b.input.configs)] for b in why.bars]
    return Section("What the recommendation rests on", new_page=True, blocks=[
        Paragraph(f"The recommendation rests on {why.label.lower()}. In {why.draws:,} draws of every uncertain input "
                  f"at once, each configuration has the lowest {why.label.lower()} in this share of draws: {odds}.",
                  "lead"),
        Paragraph(why.sentence),
        chart,
        Table("Inputs, their ranges and crossovers", ["Input", "Range", "Crossover", "Moves"], rows),
        Paragraph(why.assumptions[0] + " Where each range comes from: see Assumptions.", "note"),
    ])


def _workload_words(comp) -> tuple[str, str]:
    """The estimates' kind (train, finetune, infer) and the workload in words, for the subtitle."""
    kind = next((r.estimate.kind for r in comp.results if r.estimate), "train")
    workload = next((r.estimate.workload for r in comp.results if r.estimate and r.estimate.workload), None)
    if workload is not None:
        if kind == "infer":
            what = (f"serving a {workload.params / 1e9:,.3g}B-parameter model in {workload.precision.upper()} to "
                    f"{workload.concurrency} users ({workload.prompt_tokens:,}-token prompts, {workload.output_tokens:,}-token answers)")
        else:
            verb = "fine-tuning" if kind == "finetune" else "training"
            tokens = f" on {workload.tokens / 1e9:,.3g}B tokens" if workload.tokens else ""
            what = f"{verb} a {workload.params / 1e9:,.3g}B-parameter model{tokens} in {workload.precision.upper()}"
    else:
        what = "the workload"
    return kind, what


def _configurations(comp) -> Section:
    """A paragraph per configuration (its hardware, or why it cannot run), after the scenario's description."""
    scenario = comp.scenario
    configurations = Section("Configurations")
    for r in comp.results:
        line = f"{r.name}: {r.hardware or r.error}"
        if r.estimate is not None and not r.estimate.feasible:
            line += " — cannot run this workload: " + str(r.estimate.reasons[0])
        configurations.blocks.append(Paragraph(line))
        for note in r.notes:
            configurations.blocks.append(Paragraph(note, "note"))
    if scenario.description:
        configurations.blocks.insert(0, Paragraph(scenario.description, "lead"))
    return configurations


def _comparison_table(comp) -> Table:
    """Every metric row against the configurations, with the winners, sections and directions."""
    return Table(
        title="Comparison",
        columns=["Metric"] + comp.names,
        rows=[[f"{row.label}" + (f" ({row.unit})" if row.unit else "") + (" ≈" if row.remark else "")]
              + [c.text for c in row.cells] for row in comp.rows],
        winners=[list(row.winners) for row in comp.rows],
        sections=[row.section for row in comp.rows],
        directions=[row.direction_text for row in comp.rows],
        note="★ and shading mark the winner of an outcome row (time, speed, cost, energy, CO2, purchase, fit, "
             "break-even) among the configurations that can run the workload, and only where its low–high range "
             "clears the next configuration's; ≈ marks a row whose lead is within those ranges. Specifications and "
             "explanations carry no star. Where an estimate shows a range, the first figure is the likely value and "
             "the bracket gives low–high.",
    )


def _charts(comp, kind: str) -> Section:
    """Scores, performance per dollar against per watt, cumulative cost; a sentence where nothing compares."""
    charts = Section("Charts")
    bars = comp.score_bars
    # a chart with nothing to compare says so in a sentence instead of drawing every bar at 1.0
    messages = getattr(comp, "chart_messages", None) or {}
    relative = sum(1 for r in comp.results if r.ok) > 1
    if not messages and not relative:
        messages = {"scores": "Only one configuration can run this workload: nothing to compare.",
                    "value": "Only one configuration can run this workload: nothing to compare."}
    if messages.get("scores"):
        charts.blocks.append(Paragraph(f"Each metric, relative to the best configuration: {messages['scores']}", "note"))
    elif bars.get("metrics"):
        series = [(name, [scores[i] for scores in bars["scores"]]) for i, name in enumerate(bars["options"])]
        charts.blocks.append(BarChart("Each metric, relative to the best configuration", bars["metrics"], series,
                                      caption="1.0 is the best configuration for that metric; taller is better "
                                              "whether the metric is better high (speed) or low (cost, energy).",
                                      y_label="score (best = 1)"))
    if messages.get("value"):
        charts.blocks.append(Paragraph(f"Performance per dollar against performance per watt: {messages['value']}", "note"))
    elif comp.value_points:
        charts.blocks.append(ScatterChart(
            "Performance per dollar against performance per watt",
            [(p["name"], p["per_kw"], p["per_dollar"]) for p in comp.value_points],
            "throughput per kW (tokens/s/kW)",
            "output tokens per dollar" if kind == "infer" else "tokens trained per dollar",
            caption="Up and to the right is better."))
    curves = comp.cost_curves
    if curves.get("series"):
        charts.blocks.append(LineChart(
            "Cumulative cost: buying against renting",
            curves["months"], [(s["name"], s["ys"], s["kind"]) for s in curves["series"]],
            "months", "cumulative cost ($)",
            markers=[(f"break-even, {c['name']}: {c['month']:.1f} months", c["month"], c["usd"]) for c in curves["crossings"]],
            caption=f"Repeating the workload {curves['basis']}."))
    elif messages.get("cost"):
        charts.blocks.append(Paragraph(f"Cumulative cost, buying against renting: {messages['cost']}", "note"))
    serving = getattr(comp, "serving_curves", None) or {}
    if serving.get("series"):
        charts.blocks.append(CurveChart(
            "Throughput against interactivity",
            [(s["name"], s["xs"], s["ys"]) for s in serving["series"]],
            "output tokens/s per user", "output tokens/s per GPU",
            markers=[(s["name"], *s["operating"]) for s in serving["series"] if s.get("operating")],
            caption="Each curve is the best the serving planner finds at each speed per user (layouts, "
                    "concurrencies and, on two or more nodes, prompts and decoding on separate nodes, where no "
                    "other point beats them on both axes), as InferenceX publishes serving results; a dot is the "
                    "scenario's own operating point. Up and to the right is better."))
    return charts
