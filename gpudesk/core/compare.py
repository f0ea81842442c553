"""Side-by-side comparison of two to six configurations for one workload: the table with a
winner per row, the recommendation written from the numbers, the chart series, and the sources
of every catalogue figure used. The compare view, `gpudesk compare`, CSV and the PDF all use it."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import date

from gpudesk.core.catalogue.fields import PRICE_KIND_WORDS
from gpudesk.core.estimate import constants as C
from gpudesk.core.estimate.cost import PRICING_ALIASES, PRICING_WORDS
from gpudesk.core.estimate.engine import estimate as run_estimate
from gpudesk.core.estimate.tco import PART_FACTORS
from gpudesk.core.estimate.topology import joins_nodes
from gpudesk.core.estimate.types import Estimate, Range
from gpudesk.core.format import duration, format_number, si, span, usd
from gpudesk.core.prices import STALE_MONTHS, is_stale
from gpudesk.core.resolve import ResolveError, resolve_option
from gpudesk.core.scenario import Option, Scenario
from gpudesk.core.summary import STEP_PARTS, plan_text, step_text

LOWER, HIGHER = "lower", "higher"
TIE = 0.005  # values within 0.5% share a win


@dataclass
class OptionResult:
    name: str
    option: Option
    estimate: Estimate | None
    inputs: object | None = None  # EstimateInput
    error: str = ""  # a resolve error (unknown id): the option cannot be estimated at all
    hardware: str = ""
    notes: list[str] = field(default_factory=list)
    price_used: str = ""  # which purchase price the capex rests on, in words
    price_short: str = ""  # its kind and date ('list price, 2026-07-06'), shown under the capex

    @property
    def ok(self) -> bool:
        return self.estimate is not None and self.estimate.feasible


@dataclass
class Cell:
    value: float | None = None
    low: float | None = None
    high: float | None = None
    text: str = ""
    note: str = ""  # what the figure rests on (the price used, say): the cell's tooltip

    def to_json(self) -> dict:
        out = {"value": self.value, "low": self.low, "high": self.high, "text": self.text}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Row:
    key: str
    section: str
    label: str
    unit: str
    better: str | None
    cells: list[Cell]
    winners: list[int] = field(default_factory=list)
    # an outcome a buyer pays or waits for (time, speed, cost, energy, CO2, capex, fits, break-even):
    # only these earn a star; specification and explanatory rows show a direction but no winner
    outcome: bool = False
    remark: str = ""  # e.g. that the best figure's lead is within the estimates' uncertainty

    @property
    def direction_text(self) -> str:
        return {LOWER: "lower is better", HIGHER: "higher is better"}.get(self.better or "", "")


@dataclass
class Comparison:
    scenario: Scenario
    results: list[OptionResult]
    rows: list[Row]
    recommendation: str
    sources: list[dict]
    catalogue_version: str
    created: str
    question: str
    cost_curves: dict = field(default_factory=dict)
    value_points: list[dict] = field(default_factory=list)
    score_bars: dict = field(default_factory=dict)
    # serving: each option's throughput-interactivity curve (tokens/s per user -> tokens/s per GPU)
    serving_curves: dict = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    # why a chart has nothing to show, by chart ("scores", "value", "cost"); "" when it has
    chart_messages: dict = field(default_factory=dict)
    # what the recommendation rests on (defend.Why), or why it cannot be worked out
    why: object | None = None
    why_error: str = ""

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.results]

    def row(self, key: str) -> Row | None:
        return next((r for r in self.rows if r.key == key), None)


# ----------------------------------------------------------------------------- building
def build_comparison(scenario: Scenario, catalogue, settings=None, calibrations=()) -> Comparison:
    options = scenario.options()
    where = "compare" if scenario.compare else "cluster"
    results = []
    for i, option in enumerate(options):
        label = f"{where}[{i}].cluster" if scenario.compare else "cluster"
        try:
            resolved = resolve_option(scenario, option, catalogue, label, settings, tuple(calibrations))
        except ResolveError as exc:
            results.append(OptionResult(option.name, option, None, None, str(exc)))
            continue
        est = run_estimate(resolved.inputs)
        est.assumptions[:0] = resolved.assumptions
        results.append(OptionResult(option.name, option, est, resolved.inputs, hardware=_hardware(resolved.inputs),
                                    notes=list(option.notes and [option.notes] or []),
                                    price_used=price_used(scenario, option, catalogue),
                                    price_short=price_used(scenario, option, catalogue, short=True)))
    errors = [r for r in results if r.error]
    if errors and len(errors) == len(results):
        raise ResolveError([f"{r.name}: {r.error}" for r in errors])
    rows = _rows(results)
    comparison = Comparison(
        scenario=scenario,
        results=results,
        rows=rows,
        recommendation="",
        sources=_sources(results, catalogue),
        catalogue_version=catalogue.version,
        created=date.today().isoformat(),
        question=(scenario.report or {}).get("question") or scenario.name
        or _generated_for(scenario.workload, [r.name for r in results], catalogue),
    )
    comparison.cost_curves = cost_curves(results)
    comparison.value_points = _value_points(results)
    comparison.score_bars = _score_bars(rows, results)
    comparison.serving_curves = serving_curves(results)
    comparison.assumptions = _shared_assumptions(results)
    for r in results:  # which price each capex rests on: two list prices of one item differ by what they price
        if r.price_used and r.estimate is not None:
            comparison.assumptions.append(f"{r.name}: purchase price: " + r.price_used.replace("\n", "; "))
    comparison.chart_messages = chart_messages(comparison)
    comparison.recommendation = recommendation(comparison)
    attach_why(comparison, catalogue)
    return comparison


WHY_ROWS = {"cost_run": "cost_run", "cost_mtok": "cost_mtok", "time": "time", "energy": "energy", "co2": "co2",
            "break_even": "break_even_months"}


def attach_why(comparison: Comparison, catalogue, row: str | None = None) -> None:
    """Work out what the recommendation rests on, say it in the recommendation and beside the star
    of the deciding row; a scenario's unusable range leaves a message instead."""
    from gpudesk.core.defend import UncertaintyError, why_for

    try:
        why = why_for(comparison, catalogue, row)
    except UncertaintyError as exc:
        comparison.why, comparison.why_error = None, str(exc)
        return
    comparison.why, comparison.why_error = why, ""
    if why is None:
        return
    comparison.assumptions.extend(f"Uncertainty: {a}" for a in why.assumptions)
    winner, share = why.names[why.winner], why.probabilities[why.winner]
    odds = f"{winner} has the lowest {why.label.lower()} in {share:.0%} of {why.draws:,} draws of the uncertain inputs."
    deciding = comparison.row(WHY_ROWS[why.row])
    column = next((i for i, r in enumerate(comparison.results) if r.name == winner), None)
    if deciding is not None and column is not None:  # beside the star: how often the best stays best
        cell = deciding.cells[column]
        cell.text += f"\n{share:.0%} of draws"
        cell.note = (cell.note + "\n" if cell.note else "") + (
            f"{winner} has the lowest {why.label.lower()} in {share:.0%} of {why.draws:,} draws of the uncertain "
            "inputs (the Why tab).")
    comparison.recommendation = " ".join(x for x in (comparison.recommendation, odds, why.sentence) if x)


# ----------------------------------------------------------------------------- the question
_TASK_SUFFIX = re.compile(r"\s+(pretraining|(?:Q?LoRA\s+)?fine-tuning|serving\b.*|on\s+.*)$", re.IGNORECASE)
SHAPE_TOLERANCE = 0.005  # a workload within 0.5% of a preset's or a model's parameter count is that model


def _same(a, b) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return False
    return abs(a - b) <= SHAPE_TOLERANCE * max(abs(a), abs(b), 1e-12)


def workload_model_name(workload: dict, catalogue) -> str:
    """The model a workload trains or serves, by name, when the catalogue knows its shape: the
    model part of a workload preset with the same parameter count and layers ('nanochat d20
    (561M)' from 'nanochat d20 (561M) pretraining'), else a catalogued model of that shape; ''
    when the workload is only a parameter count."""
    if catalogue is None:
        return ""
    presets = catalogue.presets()
    params = workload.get("params")
    chosen = next((p for p in presets if p.get("id") == workload.get("preset")), None) if workload.get("preset") else None
    if chosen is not None and params is not None and not _same(params, chosen.get("workload", {}).get("params")):
        chosen = None  # the preset's model was replaced by another size
    if chosen is None and params is not None:
        for p in presets:
            w = p.get("workload", {})
            if _same(params, w.get("params")) and all(
                    workload.get(k) is None or w.get(k) is None or workload.get(k) == w.get(k) for k in ("layers", "d_model")):
                chosen = p
                break
    if chosen is not None:
        return _TASK_SUFFIX.sub("", chosen["name"]).strip() or chosen["name"]
    if params is not None and workload.get("layers") and workload.get("d_model"):
        for m in catalogue.items("models"):
            if _same(params, m.get("params")) and m.get("layers") == workload.get("layers") \
                    and m.get("d_model") == workload.get("d_model"):
                return m["name"]
    return ""


def _generated_for(workload: dict, names: list[str], catalogue) -> str:
    """generated_question for a scenario's workload as written (a preset's fields filled in)."""
    preset = next((p for p in catalogue.presets() if p.get("id") == workload.get("preset")), None) \
        if workload.get("preset") else None
    merged = {**(preset or {}).get("workload", {}), **workload}
    return generated_question(merged, names, workload_model_name(merged, catalogue))


def _count(value: float) -> str:
    """561e6 -> '561M', 1.12e10 -> '11.2B', 2e12 -> '2T'."""
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:,.3g}{unit}"
    return f"{value:,.0f}"


def _or_list(names: list[str]) -> str:
    names = [n for n in names if n]
    if len(names) <= 1:
        return names[0] if names else ""
    return ", ".join(names[:-1]) + " or " + names[-1]


def generated_question(workload: dict, names: list[str], model: str = "") -> str:
    """The question a comparison answers, written from its workload and configurations: what the
    compare view shows as the title when the user has typed none, and the PDF's title.

    'A100 PCIe 80GB or RTX 4090 Laptop GPU for fine-tuning Llama 3 8B with QLoRA on 100M tokens (BF16)?'
    """
    kind = workload.get("kind", "train")
    params = workload.get("params")
    what = model or (f"a {_count(float(params))}-parameter model" if params else "the model")
    precision = str(workload.get("precision") or ("fp16" if kind == "infer" else "bf16")).upper()
    if kind == "infer":
        users = int(workload.get("concurrency") or 1)
        task = f"serving {what} in {precision} to {users:,} user{'s' if users != 1 else ''}"
    else:
        tokens = workload.get("tokens")
        on = f" on {_count(float(tokens))} tokens" if tokens else ""
        if kind == "finetune":
            method = {"lora": "LoRA", "qlora": "QLoRA", "full": "full fine-tuning"}.get(workload.get("method") or "lora", "")
            how = f" with {method}" if method and method != "full fine-tuning" else " (all weights)" if method else ""
            task = f"fine-tuning {what}{how}{on} ({precision})"
        else:
            task = f"training {what} from scratch{on} ({precision})"
    names = [n for n in names if n]
    if not names:
        return f"Which configuration for {task}?"
    if len(names) == 1:
        return f"{names[0]} for {task}?"
    if len(names) <= 3:
        return f"{_or_list(names)} for {task}?"
    return f"Which of {len(names)} configurations for {task}?"


def price_used(scenario: Scenario, option: Option, catalogue, short: bool = False) -> str:
    """Which purchase price an option's capex rests on, in words: the scenario's own figure, or
    the catalogue's price record (its kind, amount, date, what exactly it prices and its source).
    `short`: only the kind and date of each ('list price, 2026-07-06')."""
    as_of = {**(scenario.finance or {}), **(option.finance or {})}.get("as_of")
    parts = []
    shorts = []
    for entry in option.cluster:
        if entry.cloud:
            continue
        system = catalogue.get("systems", entry.item)
        record = system or catalogue.get("accelerators", entry.item) or {}
        name = record.get("name") or entry.item
        if entry.capex_usd_per_node is not None:
            parts.append(f"{name}: ${entry.capex_usd_per_node:,.0f} per node, given in this comparison")
            shorts.append("price given here")
            continue
        price = catalogue.latest_price(entry.item, as_of=as_of)
        if price is None:
            parts.append(f"{name}: no price in the catalogue" + (f" known on {as_of}" if as_of else ""))
            continue
        kind = PRICE_KIND_WORDS.get(price["kind"], f"{price['kind']} price")
        stale = is_stale(price.get("date"), as_of)
        shorts.append(f"{kind}, {price.get('date') or 'undated'}" + (", STALE" if stale else ""))
        count = entry.nodes if system else entry.nodes * (entry.per_node or 1)
        src = catalogue.sources().get(price.get("source") or "", {})
        text = (f"{name}: {kind} ${price['usd']:,.0f}"
                + (f" × {count:,}" if count > 1 else "") + f" ({price.get('date') or 'undated'}")
        text += f", {src['title']})" if src.get("title") else ")"
        if price.get("notes"):
            text += f" — {price['notes']}"
        if not system:
            text += " The price is for the accelerators only; a host per node is counted apart (capex by part)."
        if stale:
            text += (f" STALE: more than {STALE_MONTHS} months older than "
                     + (f"the replay date {as_of}." if as_of else "today; check the price before acting on it."))
        parts.append(text)
    if short:
        return "; ".join(dict.fromkeys(shorts))
    return "\n".join(parts)


def _hardware(inputs) -> str:
    parts = []
    for g in inputs.groups:
        if g.cloud is not None:
            parts.append(f"{g.nodes} × {g.cloud.provider} {g.cloud.instance_type} ({g.per_node} × {g.device.name})")
        elif g.label and not g.label.startswith(f"{g.per_node} × "):  # a system: name it
            parts.append(f"{g.nodes} × {g.label}" if g.nodes > 1 else g.label)
        elif g.nodes > 1:
            parts.append(f"{g.nodes} nodes × {g.per_node} × {g.device.name}")
        else:
            parts.append(f"{g.per_node} × {g.device.name}")
    return " + ".join(parts)


def _is_infer(results) -> bool:
    for r in results:
        if r.estimate is not None:
            return r.estimate.kind == "infer"
    return False


def _cell_range(r: Range | None, fmt) -> Cell:
    if r is None:
        return Cell(text="—")
    if abs(r.high - r.low) <= 1e-9 * max(abs(r.likely), 1e-12):
        return Cell(r.likely, r.low, r.high, fmt(r.likely))
    return Cell(r.likely, r.low, r.high, f"{fmt(r.likely)}\n({span(fmt, r.low, r.high, r.likely)})")


def _cell(value, fmt) -> Cell:
    if value is None:
        return Cell(text="—")
    return Cell(float(value), None, None, fmt(value))


def _text(value: str) -> Cell:
    return Cell(None, None, None, value)


def _rows(results: list[OptionResult]) -> list[Row]:
    builder = _RowBuilder(results)
    builder.configuration()
    builder.estimates()
    builder.cost_and_value()
    feasible = [r.ok for r in results]
    for row in builder.rows:
        if not row.outcome:
            continue  # a specification or an explanation: no star
        row.winners = _winners(row, None if row.key == "fits" else feasible)
        row.winners, row.remark = _clear_lead(row)
    return builder.rows


def _fmt1(v: float) -> str:
    return format_number(v)


class _RowBuilder:
    """The comparison's rows, section by section, one cell per configuration."""

    def __init__(self, results: list[OptionResult]) -> None:
        self.results = results
        self.infer = _is_infer(results)
        self.rows: list[Row] = []

    def add(self, key, section, label, unit, better, cells) -> None:
        self.rows.append(Row(key, section, label, unit, better, cells, outcome=key in OUTCOME_ROWS))

    def per(self, fn) -> list[Cell]:
        return [Cell(text="not estimated") if r.estimate is None or r.inputs is None else fn(r, r.estimate)
                for r in self.results]

    def estimated(self, value_of, fmt) -> list[Cell]:
        """A range from each feasible estimate (`value_of(estimate)`), blank where it cannot run."""
        return self.per(lambda r, e: _cell_range(value_of(e) if e.feasible else None, fmt))

    def configuration(self) -> None:
        results, add, per = self.results, self.add, self.per
        precision = next((r.estimate.precision_used for r in results if r.estimate and r.estimate.precision_used), "")
        add("hardware", "Configuration", "Hardware", "", None, [_text(r.hardware or r.error or "—") for r in results])
        add("devices", "Configuration", "Accelerators", "", None, per(lambda r, e: _cell(e.devices, _fmt1)))
        add("peak_device", "Configuration", f"Dense peak per device ({precision.upper() or 'workload precision'})",
            "TFLOPS", HIGHER, per(lambda r, e: _cell(_peak(r, e), _fmt1)))
        add("peak_total", "Configuration", "Dense peak, all devices", "PFLOPS", HIGHER,
            per(lambda r, e: _cell(e.peak_pflops if e.peak_pflops else None, _sig3)))
        add("memory_device", "Configuration", "Memory per device", "GB", HIGHER,
            per(lambda r, e: _cell(_device(r).memory_gb, _fmt1)))
        # explanations, not outcomes: no winner (separate boards' memory is not one pool; a low TDP or a
        # high utilisation is not what a buyer pays for)
        add("memory_total", "Configuration", "Memory, all devices", "GB", None,
            per(lambda r, e: _cell((_device(r).memory_gb or 0) * e.devices or None, _fmt1)))
        add("bandwidth", "Configuration", "Memory bandwidth per device", "GB/s", HIGHER,
            per(lambda r, e: _cell(_device(r).mem_bandwidth_gbs, _fmt1)))
        add("tdp", "Configuration", "TDP per device", "W", None, per(lambda r, e: _cell(_device(r).tdp_w, _fmt1)))
        add("links", "Configuration", "Links (inside a node / between nodes)", "", None,
            per(lambda r, e: _text(_links(r))))

    def estimates(self) -> None:
        add, per, est, infer = self.add, self.per, self.estimated, self.infer
        add("fits", "Estimates", "Fits in memory", "", HIGHER, per(lambda r, e: Cell(
            1.0 if e.memory.fits else 0.0, None, None, _fits_text(e))))
        add("plan", "Estimates", "Serving layout" if infer else "Parallel plan", "", None,
            per(lambda r, e: _text(plan_text(e) if e.feasible else "—")))
        if infer:
            add("decode_user", "Estimates", "Decode speed per user", "tokens/s", HIGHER,
                est(lambda e: e.decode_tokens_per_s_per_user, lambda v: f"{v:,.1f}"))
            add("decode_total", "Estimates", "Decode speed, all users", "tokens/s", HIGHER,
                est(lambda e: e.tokens_per_s, lambda v: f"{v:,.0f}"))
            add("ttft", "Estimates", "Time to first token", "", LOWER, est(lambda e: e.ttft_s, duration))
        else:
            add("step", "Estimates", "Where each step's time goes", "", None,
                per(lambda r, e: _text(step_text(e) if e.feasible else "—")))
            add("time", "Estimates", "Time to train", "", LOWER, est(lambda e: e.time_s, duration))
            add("throughput", "Estimates", "Throughput", "tokens/s", HIGHER, est(lambda e: e.tokens_per_s, si))
            add("mfu", "Estimates", "Model FLOP utilisation", "", None, est(lambda e: e.mfu, lambda v: f"{v:.0%}"))
        add("power", "Estimates", "Power, with PUE", "kW", None,
            est(lambda e: e.power_w.scaled(1e-3) if e.power_w and e.power_w.likely else None, _sig3))
        run = "round of requests" if infer else "run"
        add("energy", "Estimates", f"Energy per {run}", "kWh", LOWER, est(lambda e: e.energy_kwh, _sig3))
        add("co2", "Estimates", f"CO2 per {run}", "kg CO2e", LOWER, est(lambda e: e.co2_kg, _sig3))
        if any(r.inputs is not None and r.inputs.finance.embodied for r in self.results):
            add("embodied", "Estimates", f"Embodied CO2 per {run} (making the hardware)", "kg CO2e", LOWER,
                per(lambda r, e: _embodied_cell(r, e)))

    def cost_and_value(self) -> None:
        add, per = self.add, self.per
        run = "round of requests" if self.infer else "run"
        add("cost_run", "Cost", f"Cost per {run}", "$", LOWER, per(_cost_cell))
        if self.infer:
            add("cost_mtok", "Cost", "Cost per million output tokens", "$", LOWER, per(_per_mtok_cell))
        add("capex", "Cost", "Purchase (capex)", "$", LOWER, per(lambda r, e: _capex_cell(r, e)))
        add("capex_parts", "Cost", "Capex by part (hardware, hosts, network, facility)", "", None, per(_capex_parts_cell))
        years = {r.inputs.finance.lifetime_years for r in self.results if r.inputs is not None}
        span = f"{years.pop():g} years" if len(years) == 1 else "the years of use"
        add("tco", "Cost", f"Total cost of owning over {span} (capex, power, upkeep)", "$", LOWER,
            per(lambda r, e: _cell(e.cost.total_usd_over_life if e.feasible else None, usd)))
        add("break_even_runs", "Cost", "Break-even against renting", "runs", LOWER,
            per(lambda r, e: _cell(e.cost.break_even_runs if e.feasible else None, lambda v: f"{v:,.1f}")))
        add("break_even_months", "Cost", "Break-even at the stated utilisation", "months", LOWER,
            per(lambda r, e: _cell(e.cost.break_even_months if e.feasible else None, lambda v: f"{v:,.1f}")))
        for pricing, words in PRICING_WORDS.items():
            if any(r.estimate is not None and pricing in r.estimate.cost.break_even_by_pricing for r in self.results):
                add(f"break_even_{pricing}", "Cost", f"Break-even against {words} cloud prices", "months", LOWER,
                    per(lambda r, e, p=pricing: _break_even_cell(e, p)))
        what = "Output tokens per dollar" if self.infer else "Tokens trained per dollar"
        add("per_dollar", "Value", what, "tokens/$", HIGHER, per(_tokens_per_dollar))
        add("per_watt", "Value", "Throughput per kW", "tokens/s/kW", HIGHER, per(_per_kw))


# Rows a buyer chooses by; every other row explains them (peaks, memory, TDP, utilisation, power,
# the value ratios that restate cost and energy per token).
OUTCOME_ROWS = frozenset({"fits", "decode_user", "decode_total", "ttft", "time", "throughput", "energy", "co2",
                          "embodied", "cost_run", "cost_mtok", "capex", "tco", "break_even_runs", "break_even_months",
                          "break_even_on_demand", "break_even_spot", "break_even_reserved_1y",
                          "break_even_reserved_3y"})


def _clear_lead(row: Row) -> tuple[list[int], str]:
    """The winners whose lead is larger than the estimates' uncertainty: a winner's range must not
    overlap the best other configuration's range. Otherwise no star, and the row says why."""
    if len(row.winners) != 1:
        return row.winners, ""
    w = row.winners[0]
    win = row.cells[w]
    if win.low is None or win.high is None:
        return row.winners, ""
    rivals = [c for i, c in enumerate(row.cells) if i != w and c.value is not None]
    if not rivals:
        return row.winners, ""
    if row.better == LOWER:
        rival = min(rivals, key=lambda c: c.value)
        clear = win.high < (rival.low if rival.low is not None else rival.value)
    else:
        rival = max(rivals, key=lambda c: c.value)
        clear = win.low > (rival.high if rival.high is not None else rival.value)
    if clear:
        return row.winners, ""
    return [], "the best figure's lead is within the estimates' low–high ranges: no clear winner"


def _sig3(value: float) -> str:
    """Three significant figures without scientific notation: 0.0895, 24.3, 3,170, 2,380,000."""
    if abs(value) >= 1000:
        return f"{value:,.0f}" if abs(value) < 1e6 else f"{float(f'{value:.3g}'):,.0f}"
    return f"{value:.3g}"


def _why_slower(fast: Estimate, slow: Estimate) -> str:
    """Why a training configuration is slower, from the estimates' figures: less peak compute, a
    lower share of it reached (and why, where the engine says), the step's largest non-compute part."""
    out = []
    if fast.peak_pflops and slow.peak_pflops and fast.peak_pflops > 1.2 * slow.peak_pflops:
        ratio = fast.peak_pflops / slow.peak_pflops
        out.append(f"its dense peak is {ratio:,.2g}× theirs all together" if slow.devices > 1 else
                   f"its dense peak is {ratio:,.2g}× as high")
    if fast.mfu and slow.mfu and fast.mfu.likely > 1.2 * slow.mfu.likely:
        text = f"it uses {fast.mfu.likely:.0%} of its peak against {slow.mfu.likely:.0%}"
        tensor = next((n for n in slow.notes if n.code == "no_tensor_cores"), None)
        if tensor is not None:
            text += (f" (no tensor cores: 16-bit math runs at the {tensor.values['rate_tflops']:g} TFLOPS FP32 rate, "
                     f"not {tensor.values['peak_tflops']:g})")
        out.append(text)
    fast_plan, slow_plan = fast.plan or {}, slow.plan or {}
    full = slow.memory.capacity_gb and slow.memory.per_device_gb > 0.85 * slow.memory.capacity_gb
    if full and (slow_plan.get("micro_batch", 1) < fast_plan.get("micro_batch", 1)
                 or slow_plan.get("recompute", "none") != "none" != fast_plan.get("recompute", "none")):
        mb = slow_plan.get("micro_batch", 1)
        text = (f"on the slower one each device holds micro-batches of only {mb} sequence{'s' if mb > 1 else ''} in "
                f"{slow.memory.capacity_gb:,.0f} GB")
        if slow_plan.get("recompute", "none") != "none":
            text += ", and only with activations recomputed"
        out.append(text)
    b = slow.breakdown or {}
    step = b.get("step_s") or 0.0
    waits = [(b.get(key, 0.0) / step, label) for key, label in STEP_PARTS[1:] if step > 0]
    if waits:
        share, label = max(waits)
        if share >= 0.1:
            link = f" over {slow.slowest_link}" if label != "pipeline bubble" and slow.slowest_link else ""
            out.append(f"{share:.0%} of each of their steps is {label}{link}")
    return "; ".join(out)


def slowest_link_share(e: Estimate) -> tuple[str, float, float]:
    """(the link that limits a step: the one with the most exposed seconds, its share of the
    step, the share of all exposed communication), from the likely case's step breakdown."""
    b = e.breakdown or {}
    seconds = b.get("link_seconds") or {}
    step = b.get("step_s") or 0.0
    total = e.comm_share.likely if e.comm_share else 0.0
    if seconds and step > 0:
        name = max(seconds, key=seconds.get)
        return name, seconds[name] / step, max(total, seconds[name] / step)
    return e.slowest_link or "", total, total


def _fits_text(e: Estimate) -> str:
    m = e.memory
    if m.fits:
        return f"yes, {m.per_device_gb:,.1f} of {m.capacity_gb:,.1f} GB per device"
    text = f"NO: each device needs {m.per_device_gb:,.1f} GB and has {m.capacity_gb:,.1f}"
    if m.min_devices and m.min_devices > e.devices:
        return text + f"; at least {m.min_devices:,} devices would hold it"
    if m.min_devices:
        return text + " under this plan; sharding the model across these devices would hold it"
    return text + "; no number of these devices would hold it"


def _peak(r: OptionResult, e: Estimate) -> float | None:
    if not e.devices or not e.peak_pflops:
        return None
    return e.peak_pflops * 1000.0 / e.devices


def _device(r: OptionResult):
    return r.inputs.groups[0].device


def _links(r: OptionResult) -> str:
    g = r.inputs.groups[0]
    inside = g.intra.name if g.intra is not None and g.per_node > 1 else ("—" if g.per_node == 1 else "PCIe")
    if g.nodes > 1 and joins_nodes(g.intra, g.per_node):
        inside = f"{g.intra.name}, joining every node"  # rented TPU chips or hosts: one slice over ICI
    between = f"{g.nic_count} × {g.inter.name}" if g.inter is not None and g.nodes > 1 else "—"
    return f"{inside} / {between}"


def _cost_per_run(r: OptionResult, e: Estimate) -> Range | None:
    """What a run costs: the rental for rented options; purchase amortised over the lifetime plus
    electricity for owned ones (None without a price: electricity alone would flatter them)."""
    if not e.feasible:
        return None
    if any(g.cloud is not None for g in r.inputs.groups):
        return e.cost.cloud_usd_per_run
    return e.cost.owned_usd_per_run


def _cost_cell(r: OptionResult, e: Estimate) -> Cell:
    cost = _cost_per_run(r, e)
    if cost is None and e.feasible and e.cost.electricity_usd_per_run.likely:
        return Cell(text=f"no price (electricity {usd(e.cost.electricity_usd_per_run.likely)})")
    return _cell_range(cost, usd)


def _embodied_cell(r: OptionResult, e: Estimate) -> Cell:
    if not r.inputs.finance.embodied:
        return Cell(text="not counted")
    if all(g.cloud is not None for g in r.inputs.groups):
        return Cell(text="rented: the provider's")
    if e.embodied_kg_per_run is None:
        return Cell(text="no figure" if e.feasible else "—")
    return _cell_range(e.embodied_kg_per_run, _sig3)


def _capex_cell(r: OptionResult, e: Estimate) -> Cell:
    if any(g.cloud is not None for g in r.inputs.groups):
        return Cell(0.0, None, None, "none (rented)", note="Rented: nothing is bought.")
    if e.cost.capex_usd is None:
        return Cell(text="no price", note=r.price_used or "No price in the catalogue: add a quote.")
    short = r.price_short
    return Cell(e.cost.capex_usd, None, None, usd(e.cost.capex_usd) + (f"\n({short})" if short else ""),
                note="Price used: " + r.price_used if r.price_used else "")


def _per_mtok_cell(r: OptionResult, e: Estimate) -> Cell:
    """Cost per million output tokens: a round of requests' cost over its output tokens."""
    cost = _cost_per_run(r, e)
    w = e.workload
    tokens = w.output_tokens * max(1, w.concurrency) if (w and e.feasible) else 0
    if cost is None or not tokens:
        return Cell(text="—")
    return _cell_range(cost.scaled(1e6 / tokens), lambda v: f"${v:,.3g}" if v < 100 else usd(v))


PART_WORDS = {"hardware": "hardware", "hosts": "hosts", "network": "network", "facility": "facility"}


def _capex_parts_cell(r: OptionResult, e: Estimate) -> Cell:
    parts = e.cost.capex_parts
    if any(g.cloud is not None for g in r.inputs.groups):
        return _text("rented")
    if not parts:
        return _text("—")
    one_node = sum(g.nodes for g in r.inputs.groups) <= 1
    lines = [f"{PART_WORDS[k]} {usd(v)}" if v or k == "hardware" else
             f"{PART_WORDS[k]}: none" + (" (one node)" if k == "network" and one_node else "")
             for k, v in parts.items()]
    return Cell(None, None, None, "\n".join(lines), note="\n".join(e.cost.capex_notes))


def _break_even_cell(e: Estimate, pricing: str) -> Cell:
    found = e.cost.break_even_by_pricing.get(pricing) if e.feasible else None
    if found is None:
        return Cell(text="—")
    runs, months = found
    if runs is None:
        return Cell(text="never: renting is cheaper")
    rate = e.cost.rent_rates.get(pricing)
    text = f"{months:,.1f}" if months is not None else f"{runs:,.1f} runs"
    return Cell(months if months is not None else None, None, None,
                text + (f"\n(at ${rate:,.2f}/h)" if rate else ""))


def _tokens_per_dollar(r: OptionResult, e: Estimate) -> Cell:
    cost = _cost_per_run(r, e)
    if not e.feasible or cost is None or cost.likely <= 0 or e.time_s is None:
        return Cell(text="—")
    if e.kind == "infer":
        w = e.workload
        tokens = w.output_tokens * max(1, w.concurrency) if w else 0
    else:
        tokens = e.workload.tokens if e.workload else 0
    if not tokens:
        return Cell(text="—")
    values = (tokens / cost.high, tokens / cost.likely, tokens / cost.low)
    return _cell_range(Range(min(values), values[1], max(values)), lambda v: si(v))


def _per_kw(r: OptionResult, e: Estimate) -> Cell:
    if not e.feasible or not e.power_w or not e.power_w.likely:
        return Cell(text="—")
    value = e.tokens_per_s.likely / (e.power_w.likely / 1000.0)
    return _cell(value, lambda v: si(v))


def _winners(row: Row, eligible: list[bool] | None = None) -> list[int]:
    if row.better is None:
        return []
    values = [(i, c.value) for i, c in enumerate(row.cells)
              if c.value is not None and (eligible is None or eligible[i])]
    if len(values) == 1 and len(row.cells) > 1 and eligible is not None and sum(eligible) == 1:
        return [values[0][0]]  # the only configuration that can run the workload
    if len(values) < 2:
        return []
    if row.key == "fits":
        fitting = [i for i, v in values if v == 1.0]
        return fitting if 0 < len(fitting) < len(values) else []
    best = min(v for _, v in values) if row.better == LOWER else max(v for _, v in values)
    tolerance = abs(best) * TIE
    winners = [i for i, v in values if abs(v - best) <= tolerance]
    return [] if len(winners) == len(values) else winners


# ----------------------------------------------------------------------------- sources
def _factors_used(fin, e: Estimate | None) -> list:
    """The catalogue's cost factors behind the parts of an estimate's capex that are not zero."""
    parts = (e.cost.capex_parts or {}) if e is not None and e.cost is not None else {}
    if fin.tco is None:
        return []
    out = []
    for part, names in PART_FACTORS.items():
        if parts.get(part):
            out.extend(f for f in (fin.tco.get(n) for n in names) if f is not None and f.ref)
    return out


def _sources(results: list[OptionResult], catalogue) -> list[dict]:
    """Every catalogue figure the comparison used, grouped by source document, numbered."""
    used: dict[str, dict] = {}

    def cite(kind: str, record: dict | None, fields: list[str]):
        if record is None:
            return
        for name in fields:
            if record.get(name) is None:
                continue
            src = catalogue.figure_source(kind, record, name)
            if not src:
                continue
            label = f"{record.get('name') or record.get('instance_type') or record['id']}: {name}"
            if src.get("derived"):
                # a derived figure cites the source of each input, and says how it was derived
                d = src["derived"]
                for inp in d["input_sources"]:
                    entry = used.setdefault(inp["id"], {"id": inp["id"], "title": inp["title"], "url": inp["url"],
                                                        "publisher": inp["publisher"], "date": inp.get("date", ""),
                                                        "entered": "", "figures": []})
                    entry["figures"].append(f"{label}, derived ({d['formula'][len('derived: '):]}), input {inp['input']}")
                continue
            entry = used.setdefault(src["id"], {**src, "figures": []})
            entry["figures"].append(label)

    precision_field = {"fp32": "fp32_tflops", "tf32": "tf32_tflops", "fp16": "fp16_tflops", "bf16": "bf16_tflops",
                       "fp8": "fp8_tflops", "int8": "int8_tops", "fp4": "fp4_tflops"}
    for r in results:
        if r.inputs is None:
            continue
        e = r.estimate
        peak_field = precision_field.get(e.precision_used if e else "", None)
        for g in r.inputs.groups:
            acc = catalogue.get("accelerators", g.device.id)
            cite("accelerators", acc, [f for f in ("memory_gb", "mem_bandwidth_gbs", "tdp_w", peak_field) if f])
            for link in (g.intra, g.inter):
                if link is not None:
                    cite("interconnects", catalogue.get("interconnects", link.id), ["unidirectional_gbs", "bidirectional_gbs"])
            if g.cloud is not None:
                cite("cloud", catalogue.get("cloud", g.cloud.id), ["usd_per_hour"])
        for entry in r.option.cluster:
            if entry.item:
                system = catalogue.get("systems", entry.item)
                cite("systems", system, ["accelerator_count", "system_power_w"])
                if entry.capex_usd_per_node is None:
                    price = catalogue.latest_price(entry.item)
                    cite("prices", price, ["usd"])
        fin = r.inputs.finance
        if fin.rent is not None and fin.rent.cloud is not None:
            cite("cloud", catalogue.get("cloud", fin.rent.cloud.id), ["usd_per_hour"])
        for factor in _factors_used(fin, e):
            cite("cost_factors", catalogue.get("cost_factors", factor.ref), ["value"])
        region = catalogue.get("regions", r.inputs.site.region)
        cite("regions", region, ["grid_gco2e_per_kwh", "electricity_usd_per_kwh"])
    numbered = []
    for n, src in enumerate(sorted(used.values(), key=lambda s: (s.get("publisher") or "", s["title"])), 1):
        numbered.append({**src, "number": n, "figures": sorted(set(src["figures"]))})
    return numbered


# ----------------------------------------------------------------------------- chart series
def cost_curves(results: list[OptionResult]) -> dict:
    """Cumulative cost over the lifetime of doing the same runs each month: owning each option
    against renting (its finance's rented alternative, or the rented options in the comparison)."""
    owned = [r for r in results if r.ok and r.inputs and not any(g.cloud for g in r.inputs.groups)
             and r.estimate.time_s is not None]
    reference = next((r for r in owned if r.estimate.cost.capex_usd is not None), None)
    if reference is None:
        return {}
    fin = reference.inputs.finance
    months = max(1, int(round(fin.lifetime_years * 12)))
    run_hours = reference.estimate.time_s.likely / 3600.0
    runs_per_month = fin.utilization * C.HOURS_PER_MONTH / run_hours if run_hours > 0 else 0.0
    xs = list(range(0, months + 1))
    series = []
    crossings = []
    for r in results:
        if not r.ok or r.estimate.time_s is None:
            continue
        e = r.estimate
        if any(g.cloud for g in r.inputs.groups):
            per_run = e.cost.cloud_usd_per_run.likely if e.cost.cloud_usd_per_run else None
            if per_run is None:
                continue
            series.append({"name": f"{r.name}", "kind": "rent", "ys": [per_run * runs_per_month * m for m in xs]})
        elif e.cost.capex_usd is not None and e.cost.owned_marginal_usd_per_run is not None:
            capex, marginal = e.cost.capex_usd, e.cost.owned_marginal_usd_per_run.likely
            series.append({"name": f"{r.name} (bought)", "kind": "own",
                           "ys": [capex + marginal * runs_per_month * m for m in xs]})
            rent_cloud = r.inputs.finance.rent.cloud.id if r.inputs.finance.rent and r.inputs.finance.rent.cloud else None
            rented_in_comparison = any(o.ok and any(g.cloud is not None and g.cloud.id == rent_cloud for g in o.inputs.groups)
                                       for o in results)
            if (e.cost.cloud_usd_per_run is not None and not rented_in_comparison
                    and not any(s["name"] == f"Renting: {e.cost.rent_label}" for s in series)):
                rent_per_run = e.cost.cloud_usd_per_run.likely
                series.append({"name": f"Renting: {e.cost.rent_label}", "kind": "rent",
                               "ys": [rent_per_run * runs_per_month * m for m in xs]})
            if e.cost.cloud_usd_per_run is not None:
                saving = (e.cost.cloud_usd_per_run.likely - marginal) * runs_per_month
                if saving > 0:
                    crossings.append({"name": r.name, "month": capex / saving,
                                      "usd": capex + marginal * runs_per_month * capex / saving})
    return {
        "months": xs,
        "series": series,
        "crossings": crossings,
        "runs_per_month": runs_per_month,
        "basis": f"{_sig3(runs_per_month)} runs a month: what {reference.name} completes at {fin.utilization:.0%} utilisation",
    }


def serving_curves(results: list[OptionResult]) -> dict:
    """Each serving option's throughput-interactivity frontier (the engine's serving curve): output
    tokens/s per GPU against tokens/s per user, with the option's operating point marked; empty for
    training."""
    series = []
    for r in results:
        if not r.ok or r.estimate.kind != "infer":
            continue
        curve = r.estimate.serving.get("curve") or []
        if not curve:
            continue
        e = r.estimate
        per_user = e.decode_tokens_per_s_per_user.likely if e.decode_tokens_per_s_per_user else None
        operating = (per_user, e.tokens_per_s.likely / max(1, e.devices)) if per_user else None
        series.append({"name": r.name, "xs": [p["tokens_per_s_per_user"] for p in curve],
                       "ys": [p["tokens_per_s_per_gpu"] for p in curve], "operating": operating,
                       "usd_per_million_tokens": [p.get("usd_per_million_tokens") for p in curve],
                       "tokens_per_s_per_mw": [p.get("tokens_per_s_per_mw") for p in curve]})
    return {"series": series} if series else {}


def _value_points(results: list[OptionResult]) -> list[dict]:
    points = []
    for r in results:
        if not r.ok:
            continue
        per_dollar = _tokens_per_dollar(r, r.estimate).value
        per_kw = _per_kw(r, r.estimate).value
        if per_dollar and per_kw:
            points.append({"name": r.name, "per_dollar": per_dollar, "per_kw": per_kw})
    return points


SCORE_ROWS = {"time": "Time", "throughput": "Speed", "decode_user": "Per user", "decode_total": "All users",
              "ttft": "First token", "cost_run": "Cost per run", "energy": "Energy", "co2": "CO2", "power": "Power",
              "per_dollar": "Per $", "per_watt": "Per kW"}


def _score_bars(rows: list[Row], results) -> dict:
    """Each metric normalised so that the best option scores 1 (taller is better)."""
    metrics, scores = [], []
    for row in rows:
        if row.key not in SCORE_ROWS or row.better is None:
            continue
        values = [c.value for c in row.cells]
        known = [v for v in values if v]
        if len(known) < 1:
            continue
        best = min(known) if row.better == LOWER else max(known)
        metrics.append(SCORE_ROWS[row.key])
        scores.append([(best / v if row.better == LOWER else v / best) if v else 0.0 for v in values])
    return {"metrics": metrics, "options": [r.name for r in results], "scores": scores}


def chart_messages(comp: Comparison) -> dict:
    """A sentence for each chart that has nothing to compare, saying why ('' when it has)."""
    results = comp.results
    ok = [r for r in results if r.ok]
    out = {"scores": "", "value": "", "cost": ""}
    if not ok:
        nothing = "No configuration can run this workload: nothing to compare."
        return dict.fromkeys(out, nothing)
    if len(results) == 1 and ok:
        out["scores"] = out["value"] = f"One configuration ({ok[0].name}): nothing to compare it with."
    elif len(ok) == 1:
        alone = f"Only one configuration can run this workload ({ok[0].name}): nothing to compare."
        out["scores"] = out["value"] = alone
    elif not comp.score_bars.get("metrics"):
        out["scores"] = "No metric has a figure for these configurations: nothing to compare."
    if not out["value"] and len(comp.value_points) < 2:
        missing = []
        for r in ok:
            lacks = []
            if not _tokens_per_dollar(r, r.estimate).value:
                lacks.append("no price" if _cost_per_run(r, r.estimate) is None else "no cost per run")
            if not _per_kw(r, r.estimate).value:
                lacks.append("no power figure")
            if lacks:
                missing.append(f"{r.name} has {' and '.join(lacks)}")
        have = [p["name"] for p in comp.value_points]
        lead = (f"Only {have[0]} has both a cost and a power figure" if have else
                "No configuration has both a cost and a power figure")
        out["value"] = lead + (f" ({'; '.join(missing)})" if missing else "") + ": nothing to compare."
    if not comp.cost_curves.get("series"):
        owned = [r for r in ok if r.inputs and not any(g.cloud for g in r.inputs.groups)]
        priced = [r for r in owned if r.estimate.cost.capex_usd is not None]
        if not owned:
            out["cost"] = "Every configuration is rented: there is nothing bought to set against renting."
        elif not priced:
            out["cost"] = (f"{_or_list([r.name for r in owned]).replace(' or ', ' and ')} "
                           f"{'has' if len(owned) == 1 else 'have'} no purchase price: add a quote in the catalogue "
                           "to set buying against renting.")
        elif any(r.estimate.time_s is None for r in priced):
            out["cost"] = "The workload has no amount of work (tokens) to repeat: set its training data."
        else:
            out["cost"] = "Buying against renting needs a rented alternative: choose one under Rent instead."
    return out


def _shared_assumptions(results: list[OptionResult]) -> list[str]:
    out: list[str] = []
    for r in results:
        if r.estimate is None:
            continue
        for text in r.estimate.assumptions:
            line = f"{r.name}: {text}"
            if line not in out:
                out.append(line)
    return out


# ----------------------------------------------------------------------------- the recommendation
def recommendation(comp: Comparison) -> str:
    """One paragraph written from the numbers: who wins on what, by how much, and what it rests on."""
    results = comp.results
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    if not ok:
        reasons = "; ".join(f"{r.name}: {(str(r.estimate.reasons[0]) if r.estimate and r.estimate.reasons else r.error)}" for r in bad)
        return f"None of the configurations can run this workload. {reasons}"
    infer = _is_infer(results)
    parts: list[str] = []
    if bad:
        parts.append(_cannot_run_sentence(ok, bad))
    parts += [s for s in (_decode_sentence(ok) if infer else _time_sentence(ok), _cost_sentence(ok, infer)) if s]
    parts += _break_even_sentences(ok, infer)
    greenest = min((r for r in ok if r.estimate.co2_kg is not None), key=lambda r: r.estimate.co2_kg.likely, default=None)
    if greenest is not None and len(ok) > 1:
        parts.append(f"{greenest.name} emits the least CO2 per {'round' if infer else 'run'} "
                     f"({greenest.estimate.co2_kg.likely:,.3g} kg at {greenest.inputs.site.grid_gco2e_per_kwh:g} gCO2e/kWh).")
    parts.append(_rests_on(results, ok))
    return " ".join(parts)


def _cannot_run_sentence(ok: list[OptionResult], bad: list[OptionResult]) -> str:
    why = []
    for r in bad:
        if r.error:
            why.append(f"{r.name} could not be estimated ({r.error})")
        else:
            why.append(f"{r.name} cannot run it ({_why_not(r.estimate.reasons[0])})")
    return ("Only " + ok[0].name + " can run this workload: " if len(ok) == 1 else "") + "; ".join(why) + "."


def _decode_sentence(ok: list[OptionResult]) -> str:
    speed = lambda r: r.estimate.decode_tokens_per_s_per_user  # noqa: E731
    fastest = max(ok, key=lambda r: speed(r).likely)
    text = (f"{fastest.name} answers {'at' if len(ok) == 1 else 'fastest,'} about {speed(fastest).likely:,.0f} "
            "tokens/s per user")
    others = [r for r in ok if r is not fastest]
    if others:
        second = max(others, key=lambda r: speed(r).likely)
        text += f", {speed(fastest).likely / speed(second).likely:,.2g}× {second.name}"
        text += _overlap_note(speed(fastest), speed(second), higher=True)
    return text + "."


def _time_sentence(ok: list[OptionResult]) -> str:
    with_time = [r for r in ok if r.estimate.time_s is not None]
    if not with_time:
        return ""
    t = lambda r: r.estimate.time_s  # noqa: E731
    fastest = min(with_time, key=lambda r: t(r).likely)
    text = f"{fastest.name} finishes a run{'' if len(with_time) == 1 else ' fastest,'} in about {duration(t(fastest).likely)}"
    others = [r for r in with_time if r is not fastest]
    if others:
        second = min(others, key=lambda r: t(r).likely)
        text += f" against {duration(t(second).likely)} for {second.name} ({t(second).likely / t(fastest).likely:,.2g}× longer)"
        text += _overlap_note(t(fastest), t(second), higher=False)
        why = _why_slower(fastest.estimate, second.estimate)
        if why:
            text += f": {why}"
    return text + "."


def _cost_sentence(ok: list[OptionResult], infer: bool) -> str:
    costed = [(r, _cost_per_run(r, r.estimate)) for r in ok]
    costed = [(r, c) for r, c in costed if c is not None and c.likely > 0]
    if not costed:
        return ""
    cheapest, c = min(costed, key=lambda rc: rc[1].likely)
    per = "round of requests" if infer else "run"
    text = (f"{cheapest.name} costs {usd(c.likely)} per {per}" if len(costed) == 1 else
            f"{cheapest.name} costs least per {per}, {usd(c.likely)}")
    others = [(r, x) for r, x in costed if r is not cheapest]
    if others:
        second, c2 = min(others, key=lambda rc: rc[1].likely)
        text += f" against {usd(c2.likely)} for {second.name} ({1 - c.likely / c2.likely:.0%} less)"
    return text + "."


def _break_even_sentences(ok: list[OptionResult], infer: bool) -> list[str]:
    parts = []
    for r in ok:
        e = r.estimate
        if e.cost.break_even_runs is not None and e.cost.capex_usd is not None:
            when = (f"after about {e.cost.break_even_months:,.1f} months of serving at {r.inputs.finance.utilization:.0%} "
                    "utilisation" if infer else
                    f"after about {e.cost.break_even_runs:,.0f} runs ({e.cost.break_even_months:,.1f} months at "
                    f"{r.inputs.finance.utilization:.0%} utilisation)")
            pricing = PRICING_WORDS.get(PRICING_ALIASES.get(r.inputs.finance.pricing, r.inputs.finance.pricing), "")
            parts.append(f"Bought for {usd(e.cost.capex_usd)}, {r.name} pays for itself against renting "
                         f"{e.cost.rent_label}" + (f" at {pricing} prices" if pricing else "") + f" {when}.")
        elif e.cost.capex_usd is not None and e.cost.cloud_usd_per_run is not None and e.cost.break_even_runs is None:
            parts.append(f"Buying {r.name} never pays off against renting {e.cost.rent_label}: a rented run costs less "
                         "than running the owned hardware.")
    return parts


def _rests_on(results: list[OptionResult], ok: list[OptionResult]) -> str:
    overrides = [r.name for r in results if any(entry.overrides for entry in r.option.cluster)]
    sensitive = ["the achieved utilisation (the low–high ranges)"]
    if any(r.estimate and r.estimate.cost.capex_usd for r in ok):
        sensitive.append("how often the hardware is used")
    if overrides:
        sensitive.append(f"the figures this scenario overrides for {', '.join(overrides)}")
    return ("The conclusion rests on " + ", ".join(sensitive[:-1]) + (" and " if len(sensitive) > 1 else "")
            + sensitive[-1] + ".")


def _why_not(finding) -> str:
    """A short clause for the recommendation, written from the engine's typed reason."""
    v = finding.values
    if finding.code in ("memory", "weights_do_not_fit"):
        more = f"; at least {int(v['min_devices']):,} devices would" if v.get("min_devices") else ""
        return f"each device would need {v['need_gb']:,.1f} GB but has {v['capacity_gb']:,.1f} GB{more}"
    return str(finding).rstrip(".")


def _overlap_note(best: Range, second: Range, higher: bool) -> str:
    overlap = best.low <= second.high if higher else best.high >= second.low
    return "; the estimates' ranges overlap, so measurements could reverse the order" if overlap else ""


# ----------------------------------------------------------------------------- output
def comparison_json(comp: Comparison) -> dict:
    return {
        "name": comp.scenario.name,
        "question": comp.question,
        "catalogue_version": comp.catalogue_version,
        "created": comp.created,
        "configurations": [
            {"name": r.name, "hardware": r.hardware, "error": r.error or None,
             "estimate": r.estimate.to_json() if r.estimate else None}
            for r in comp.results
        ],
        "rows": [
            {"key": row.key, "section": row.section, "label": row.label, "unit": row.unit, "better": row.better,
             "cells": [c.to_json() for c in row.cells], "winners": [comp.results[i].name for i in row.winners],
             "outcome": row.outcome, "remark": row.remark}
            for row in comp.rows
        ],
        "recommendation": comp.recommendation,
        "why": comp.why.to_json() if comp.why is not None else None,
        "why_error": comp.why_error or None,
        "sources": [{k: s.get(k) for k in ("number", "title", "publisher", "url", "date", "entered", "figures")}
                    for s in comp.sources],
    }


def comparison_csv(comp: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ["section", "metric", "unit", "better"]
    for name in comp.names:
        header += [name, f"{name} low", f"{name} high"]
    header.append("winner")
    writer.writerow(header)
    for row in comp.rows:
        line = [row.section, row.label, row.unit, row.direction_text]
        for cell in row.cells:
            value = cell.value if cell.value is not None and cell.text not in ("—",) else cell.text.replace("\n", " ")
            line += [value, "" if cell.low is None else cell.low, "" if cell.high is None else cell.high]
        line.append("; ".join(comp.results[i].name for i in row.winners))
        writer.writerow(line)
    return out.getvalue()


def format_comparison(comp: Comparison) -> str:
    names = comp.names
    width = max(14, min(26, max(len(n) for n in names)))
    label_w = max(len(r.label) for r in comp.rows) + 2
    lines = [comp.question, "=" * len(comp.question), ""]
    lines.append(" " * label_w + "".join(n[:width].ljust(width + 2) for n in names))
    section = None
    for row in comp.rows:
        if row.section != section:
            section = row.section
            lines.append(f"-- {section}")
        cells = []
        for i, cell in enumerate(row.cells):
            text = cell.text.split("\n")[0]
            if i in row.winners:
                text = "*" + text
            cells.append(text[:width].ljust(width + 2))
        facts = ", ".join(x for x in (row.unit, row.direction_text) if x)
        suffix = f"  [{facts}]" if facts else ""
        if row.remark:
            suffix += f"  ({row.remark})"
        lines.append(row.label.ljust(label_w) + "".join(cells) + suffix)
    lines += ["", "* marks the winner of a row: only outcomes (time, speed, cost, energy, CO2, purchase, fit, "
              "break-even), and only where its low–high range clears the next configuration's.", "", "Recommendation", comp.recommendation, "", "Sources"]
    for src in comp.sources:
        entered = f" ({src['entered']})" if src.get("entered") else ""
        lines.append(f"  [{src['number']}] {src['title']} — {src.get('publisher') or ''}, {src.get('date') or 'undated'} "
                     f"{src.get('url') or ''}{entered}")
    return "\n".join(lines)
