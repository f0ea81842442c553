"""What a recommendation rests on: how far the deciding outcome moves when each uncertain input
moves alone across its range (a tornado), the value of each input at which another configuration
would win (a crossover), and how often each configuration wins when every input is drawn at once
(a Monte Carlo over stated distributions, with a fixed seed).

Nothing is re-planned: each configuration's outcome is recomputed in closed form from its estimate
(time, energy, capex by part, rent), so the inputs are the scenario's own figures times a factor:
time scales with efficiency and the engine's error, energy with time and PUE, cost with energy,
price, capex, utilisation and years, exactly as `estimate/cost.py` composes them. The ranges come
from data/uncertainty.toml, a scenario's `uncertainty` section, the catalogue's price observations
and the estimate's own low–high. No Qt."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from gpudesk.core.estimate import constants as C

DRAWS = 2000
SEED = 20261128
DISTRIBUTIONS = ("triangular", "log_triangular", "uniform")
# the outcomes a recommendation can rest on: (label, unit, format); all are better lower
ROWS = {
    "cost_run": ("Cost per run", "$", lambda v: f"${v:,.0f}" if v >= 100 else f"${v:,.2f}"),
    "cost_mtok": ("Cost per million output tokens", "$", lambda v: f"${v:,.3g}"),
    "time": ("Time per run", "h", lambda v: f"{v:,.3g} h"),
    "energy": ("Energy per run", "kWh", lambda v: f"{v:,.3g} kWh"),
    "co2": ("CO2 per run", "kg CO2e", lambda v: f"{v:,.3g} kg"),
    "break_even": ("Break-even against renting", "months", lambda v: f"{v:,.1f} months"),
}
# scenario fields the inputs stand for, for editing in place (and for a scenario's `uncertainty`)
FIELDS = {"electricity": ("site", "electricity_usd_per_kwh"), "pue": ("site", "pue"),
          "grid": ("site", "grid_gco2e_per_kwh"), "utilisation": ("finance", "utilization"),
          "years": ("finance", "lifetime_years")}


class UncertaintyError(ValueError):
    """A range or distribution that cannot be used; the message names the input."""


@dataclass(frozen=True)
class InputSpec:
    key: str
    label: str
    low: float | None = None  # factor on the scenario's value
    high: float | None = None
    distribution: str = "triangular"
    notes: str = ""
    source: str = ""
    given: bool = False  # the scenario's own range: it stands over what the catalogue's prices say


def data_file() -> Path:
    """data/uncertainty.toml wherever the bundled data lives (a checkout, a wheel, a frozen app)."""
    from gpudesk.core.paths import bundled_data_dir

    return bundled_data_dir() / "uncertainty.toml"


@lru_cache(maxsize=1)
def default_specs() -> dict[str, InputSpec]:
    raw = tomllib.loads(data_file().read_text(encoding="utf-8"))
    return {d["key"]: InputSpec(d["key"], d["label"], d.get("low"), d.get("high"), d.get("distribution", "triangular"),
                                d.get("notes", ""), d.get("source", "")) for d in raw["input"]}


@dataclass
class Basis:
    """One configuration's outcome, reduced to the figures its cost and time are made of."""

    name: str
    path: str  # the engine path: kind of work and vendor (its error is shared along it)
    hours: float  # likely hours per run
    eff_low: float = 1.0  # efficiency factors on time beyond the engine's known error
    eff_high: float = 1.0
    energy_kwh: float = 0.0  # per run, with PUE
    pue: float = 1.0
    electricity: float = 0.0  # $/kWh
    grid: float = 0.0  # gCO2e/kWh
    utilisation: float = 0.6
    years: float = 4.0
    maintenance: float = 0.0  # share of capex a year
    capex_price: float | None = None  # the part of capex bought at the catalogue's price
    capex_other: float = 0.0  # hosts, network, facility
    price_low: float = 0.8  # factors on capex_price from the price observations
    price_high: float = 1.25
    rate: float | None = None  # $/h when this configuration is rented
    rate_low: float = 0.8
    rate_high: float = 1.25
    alt_rate: float | None = None  # the rented alternative's $/h and hours per run, for break-even
    alt_hours: float | None = None
    tokens: float = 0.0  # output tokens per run (serving)
    model_error: float = C.MODEL_ERROR["training"]


def _tri(rng, n: int, low: float, mode: float, high: float, distribution: str):
    import numpy as np

    if high <= low:
        return np.full(n, mode)
    if distribution == "uniform":
        return rng.uniform(low, high, n)
    if distribution == "log_triangular":
        return np.exp(rng.triangular(math.log(low), math.log(mode), math.log(high), n))
    return rng.triangular(low, min(max(mode, low), high), high, n)


@dataclass
class Input:
    """One uncertain input: its factor range on each configuration it touches (None: untouched)."""

    key: str  # "electricity", "purchase_price:0", "model_error:train/NVIDIA", ...
    label: str
    kind: str  # the field of a Basis it scales (electricity, pue, ..., efficiency, model_error)
    low: float
    high: float
    distribution: str
    configs: tuple[int, ...]  # the configurations it moves (all for a shared input)
    base: float = 1.0  # the scenario's value, to put a crossover in the input's own units
    unit: str = ""
    edit: tuple[str, str] | None = None  # (section, field) to edit it in the scenario
    editable: bool = True  # False: a range the engine sets, or a price this scenario does not hold


@dataclass
class Crossover:
    value: float  # the factor at which the winner changes
    text: str  # the value in the input's units
    winner: int  # who wins past it


@dataclass
class Bar:
    input: Input
    at_low: list[float]  # each configuration's outcome with the input at its low end
    at_high: list[float]
    effect: float  # the widest swing of any configuration, as a share of the likely winner's value
    crossover: Crossover | None = None


@dataclass
class Why:
    row: str
    label: str
    unit: str
    names: list[str]
    likely: list[float]
    winner: int
    bars: list[Bar] = field(default_factory=list)
    probabilities: list[float] = field(default_factory=list)
    draws: int = DRAWS
    seed: int = SEED
    sentence: str = ""
    assumptions: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "row": self.row, "label": self.label, "unit": self.unit, "configurations": list(self.names),
            "likely": list(self.likely), "winner": self.names[self.winner], "draws": self.draws, "seed": self.seed,
            "probability_of_winning": dict(zip(self.names, self.probabilities)),
            "inputs": [{"input": b.input.label, "key": b.input.key, "low": b.input.low * b.input.base,
                        "high": b.input.high * b.input.base, "unit": b.input.unit,
                        "distribution": b.input.distribution, "effect": b.effect,
                        "outcome_at_low": dict(zip(self.names, b.at_low)),
                        "outcome_at_high": dict(zip(self.names, b.at_high)),
                        "crossover": None if b.crossover is None else {
                            "value": b.crossover.value * b.input.base, "text": b.crossover.text,
                            "winner": self.names[b.crossover.winner]}} for b in self.bars],
            "sentence": self.sentence, "assumptions": list(self.assumptions),
        }


# ----------------------------------------------------------------------------- the closed form
KINDS = ("electricity", "pue", "grid", "utilisation", "years", "purchase_price", "cloud_price", "efficiency",
         "model_error")


def outcomes(bases: list[Basis], factors: dict, row: str):
    """Each configuration's outcome (columns) for each draw (rows) of the factors, a dict of kind ->
    array (n, configs)."""
    import numpy as np

    n = next(iter(factors.values())).shape[0] if factors else 1
    out = np.full((n, len(bases)), np.nan)
    for c, b in enumerate(bases):
        f = {k: (factors[k][:, c] if k in factors else np.ones(n)) for k in KINDS}
        hours = b.hours * f["efficiency"] * f["model_error"]
        energy = b.energy_kwh * (hours / b.hours) * f["pue"]
        util = np.clip(b.utilisation * f["utilisation"], 1e-3, 1.0)
        years = b.years * f["years"]
        price = b.electricity * f["electricity"]
        if row == "time":
            out[:, c] = hours
            continue
        if row == "energy":
            out[:, c] = energy
            continue
        if row == "co2":
            out[:, c] = energy * b.grid * f["grid"] / 1000.0
            continue
        cost, marginal, capex = _cost(b, f, hours, energy, util, years, price)
        if row == "cost_run":
            out[:, c] = cost
        elif row == "cost_mtok":
            out[:, c] = cost / b.tokens * 1e6 if b.tokens else np.nan
        elif row == "break_even":
            out[:, c] = _break_even(b, f, capex, marginal, hours, util)
    return out


def _cost(b: Basis, f: dict, hours, energy, util, years, price):
    import numpy as np

    if b.rate is not None:
        return b.rate * f["cloud_price"] * hours, None, None
    if b.capex_price is None:
        return np.full_like(hours, np.nan), None, None
    capex = b.capex_price * f["purchase_price"] + b.capex_other
    runs_per_year = C.HOURS_PER_YEAR * util / hours
    marginal = energy * price + capex * b.maintenance / runs_per_year
    return marginal + capex / (runs_per_year * years), marginal, capex


def _break_even(b: Basis, f: dict, capex, marginal, hours, util):
    import numpy as np

    if capex is None or b.alt_rate is None or not b.alt_hours:
        return np.full_like(hours, np.nan)
    rent = b.alt_rate * f["cloud_price"] * b.alt_hours * f["model_error"]
    saving = rent - marginal
    months = capex / np.where(saving > 0, saving, np.nan) * hours / (C.HOURS_PER_MONTH * util)
    return np.where(saving > 0, months, np.inf)


# ----------------------------------------------------------------------------- the inputs
UNITS = {"electricity": ("$/kWh", "electricity"), "pue": ("", "pue"), "grid": ("gCO2e/kWh", "grid"),
         "utilisation": ("", "utilisation"), "years": ("years", "years")}
ROW_INPUTS = {  # which inputs can move each outcome
    "time": ("efficiency", "model_error"),
    "energy": ("efficiency", "model_error", "pue"),
    "co2": ("efficiency", "model_error", "pue", "grid"),
}


def build_inputs(bases: list[Basis], row: str, specs: dict[str, InputSpec] | None = None) -> list[Input]:
    """The inputs that can move `row`, with their ranges: shared ones once, per-configuration ones
    (purchase and cloud price, efficiency) once per configuration they touch, the engine's error
    once per engine path."""
    specs = specs or default_specs()
    wanted = ROW_INPUTS.get(row, KINDS)
    everyone = tuple(range(len(bases)))
    out: list[Input] = []
    for kind in ("electricity", "pue", "grid", "utilisation", "years"):
        s = specs[kind]
        if kind not in wanted:
            continue
        touched = tuple(c for c in everyone if _touches(bases[c], kind, row))
        if touched:
            unit, attr = UNITS[kind]
            out.append(Input(kind, s.label, kind, s.low, s.high, s.distribution, touched, getattr(bases[touched[0]], attr),
                             unit, FIELDS.get(kind)))
    for c, b in enumerate(bases):
        if "purchase_price" in wanted and b.capex_price is not None and b.rate is None:
            out.append(Input(f"purchase_price:{c}", f"Purchase price of {b.name}", "purchase_price", b.price_low,
                             b.price_high, specs["purchase_price"].distribution, (c,), b.capex_price, "$"))
        if "cloud_price" in wanted and (b.rate is not None or (row == "break_even" and b.alt_rate)):
            rate = b.rate if b.rate is not None else b.alt_rate
            out.append(Input(f"cloud_price:{c}", f"Cloud price for {b.name}" if b.rate is not None else
                             f"Cloud price of the rented alternative ({b.name})", "cloud_price", b.rate_low,
                             b.rate_high, specs["cloud_price"].distribution, (c,), rate, "$/h",
                             editable=b.rate is not None))
        if "efficiency" in wanted and (b.eff_low < 0.999 or b.eff_high > 1.001):
            out.append(Input(f"efficiency:{c}", f"Efficiency of {b.name}", "efficiency", b.eff_low, b.eff_high,
                             specs["efficiency"].distribution, (c,), editable=False))
    if "model_error" in wanted:
        for path in dict.fromkeys(b.path for b in bases):
            members = tuple(c for c, b in enumerate(bases) if b.path == path)
            e = bases[members[0]].model_error
            out.append(Input(f"model_error:{path}", f"Engine error ({path})", "model_error", math.exp(-e),
                             math.exp(e), specs["model_error"].distribution, members, editable=False))
    return out


def _touches(b: Basis, kind: str, row: str) -> bool:
    """Whether a shared input moves this configuration's outcome (a rented one pays no power bill)."""
    if kind == "grid":
        return row == "co2"
    if kind == "pue":
        return row in ("energy", "co2") or (b.rate is None and row != "time")
    if kind in ("electricity", "utilisation", "years"):
        return b.rate is None and b.capex_price is not None
    return True


def _factors(inputs: list[Input], bases: list[Basis], values: dict[str, object], n: int) -> dict:
    """kind -> (n, configs) factor arrays with each input's value (an array of n, or a float)."""
    import numpy as np

    out = {}
    for inp in inputs:
        value = values.get(inp.key, 1.0)
        arr = out.setdefault(inp.kind, np.ones((n, len(bases))))
        for c in inp.configs:
            arr[:, c] = value
    return out


def _winner(values):
    import numpy as np

    filled = np.where(np.isnan(values), np.inf, values)
    return np.argmin(filled, axis=1)


# ----------------------------------------------------------------------------- the analysis
def analyse(bases: list[Basis], row: str, specs: dict[str, InputSpec] | None = None, draws: int = DRAWS,
            seed: int = SEED) -> Why:
    """The tornado, the crossovers and the probabilities of winning `row` (lower is better)."""
    import numpy as np

    label, unit, _fmt = ROWS[row]
    inputs = build_inputs(bases, row, specs)
    likely = outcomes(bases, _factors(inputs, bases, {}, 1), row)[0]
    winner = int(_winner(likely[None, :])[0])
    why = Why(row, label, unit, [b.name for b in bases], [float(v) for v in likely], winner, draws=draws, seed=seed)
    scale = abs(likely[winner]) if np.isfinite(likely[winner]) and likely[winner] else 1.0
    for inp in inputs:
        ends = outcomes(bases, _factors(inputs, bases, {inp.key: np.array([inp.low, inp.high])}, 2), row)
        swing = np.nanmax(np.abs(ends[1] - ends[0])) if np.isfinite(ends).any() else 0.0
        bar = Bar(inp, [float(v) for v in ends[0]], [float(v) for v in ends[1]], float(swing / scale))
        bar.crossover = crossover(bases, inputs, inp, row, winner)
        why.bars.append(bar)
    why.bars.sort(key=lambda b: -b.effect)
    why.probabilities = probabilities(bases, inputs, row, draws, seed)
    why.sentence = sentence(why)
    why.assumptions = _assumptions(inputs, specs or default_specs(), draws, seed)
    return why


def crossover(bases: list[Basis], inputs: list[Input], inp: Input, row: str, winner: int,
              steps: int = 96) -> Crossover | None:
    """The value of `inp` nearest its likely value at which another configuration wins, found on a
    grid over its range and refined by bisection; None when no value in range changes the winner."""
    import numpy as np

    def who(factor: float) -> int:
        return int(_winner(outcomes(bases, _factors(inputs, bases, {inp.key: np.array([factor])}, 1), row))[0])

    best = None
    for end in (inp.low, inp.high):
        if end == 1.0:
            continue
        grid = np.exp(np.linspace(0.0, math.log(end), steps)) if end > 0 else np.linspace(1.0, end, steps)
        ws = _winner(outcomes(bases, _factors(inputs, bases, {inp.key: grid}, steps), row))
        changed = np.nonzero(ws != winner)[0]
        if not len(changed):
            continue
        lo, hi = float(grid[changed[0] - 1]), float(grid[changed[0]])
        for _ in range(40):
            mid = math.sqrt(lo * hi) if lo > 0 and hi > 0 else (lo + hi) / 2
            lo, hi = (mid, hi) if who(mid) == winner else (lo, mid)
        if best is None or abs(math.log(hi)) < abs(math.log(best[0])):
            best = (hi, who(hi))
    if best is None:
        return None
    return Crossover(best[0], value_text(inp, best[0]), best[1])


# how an input's value reads: by its kind where the kind decides, else by its unit
KIND_TEXT = {"utilisation": lambda value, factor: f"{value:.0%}",
             "efficiency": lambda value, factor: f"{factor:.2f}× the estimated time",
             "model_error": lambda value, factor: f"{factor:.2f}× the estimated time"}
UNIT_TEXT = {"$": "${:,.0f}", "$/h": "${:,.2f}/h", "$/kWh": "${:.3f}/kWh", "years": "{:.1f} years"}


def value_text(inp: Input, factor: float) -> str:
    """The input at `factor` times the scenario's value, in its own units."""
    value = factor * inp.base
    if inp.kind in KIND_TEXT:
        return KIND_TEXT[inp.kind](value, factor)
    if inp.unit in UNIT_TEXT:
        return UNIT_TEXT[inp.unit].format(value)
    return f"{value:.3g}" + (f" {inp.unit}" if inp.unit else "")


def probabilities(bases: list[Basis], inputs: list[Input], row: str, draws: int = DRAWS, seed: int = SEED) -> list[float]:
    """How often each configuration wins when every input is drawn from its distribution at once;
    an input shared by several configurations (a price, the engine's error along one path) is drawn
    once for all of them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    values = {inp.key: _tri(rng, draws, inp.low, 1.0, inp.high, inp.distribution) for inp in inputs}
    w = _winner(outcomes(bases, _factors(inputs, bases, values, draws), row))
    counts = np.bincount(w, minlength=len(bases))
    return [float(c) / draws for c in counts]


def sentence(why: Why) -> str:
    """The crossovers in words: 'B would be cheaper per run if electricity cost more than $0.31/kWh
    or if A ran below 38% utilisation.'"""
    verbs = {"cost_run": "cheaper per run", "cost_mtok": "cheaper per million tokens", "time": "faster",
             "energy": "use less energy per run", "co2": "emit less CO2 per run", "break_even": "break even sooner"}
    by_new: dict[int, list[str]] = {}
    for b in why.bars:
        x = b.crossover
        if x is None:
            continue
        rising = x.value > 1.0
        by_new.setdefault(x.winner, []).append(_condition(b.input, rising, x.text, why.names))
    if not by_new:
        return (f"No input moved across its range changes which configuration is best on {why.label.lower()}: "
                f"{why.names[why.winner]} stays ahead.")
    parts = []
    for new, conditions in by_new.items():
        verb = verbs[why.row]
        be = "would be " if not verb.startswith(("use", "emit", "break")) else "would "
        parts.append(f"{why.names[new]} {be}{verb} if " + " or if ".join(conditions[:3]) + ".")
    return " ".join(parts)


# a crossover as a condition: {more} is "more than" or "less than" by the direction the input moves,
# {above} "above" or "below", {slower} "slower" or "faster"; {who} names the configuration it is of
CONDITIONS = {
    "electricity": "electricity cost {more} {text}",
    "utilisation": "the owned hardware ran {above} {text} utilisation",
    "years": "it were used for {more} {text}",
    "purchase_price": "{who} cost {more} {text}",
    "cloud_price": "renting cost {more} {text}",
    "efficiency": "{who} ran {slower} than estimated ({text})",
    "model_error": "{who} ran {slower} than estimated ({text})",
}


def _condition(inp: Input, rising: bool, text: str, names: list[str]) -> str:
    who = names[inp.configs[0]] if len(inp.configs) == 1 else inp.label.split("(")[-1].rstrip(")")
    template = CONDITIONS.get(inp.kind, "the " + inp.label.lower() + " were {more} {text}")
    return template.format(text=text, who=who, more="more than" if rising else "less than",
                           above="above" if rising else "below", slower="slower" if rising else "faster")


def _assumptions(inputs: list[Input], specs: dict[str, InputSpec], draws: int, seed: int) -> list[str]:
    out = [f"{draws:,} draws with seed {seed}; every input drawn at once from a triangular distribution (on a "
           "log scale for prices and speeds) with its mode at the scenario's value; an input shared by several "
           "configurations is drawn once for all of them, the engine's error once per engine path."]
    for kind in dict.fromkeys(i.kind for i in inputs):
        s = specs.get(kind)
        if s is not None and s.notes:
            out.append(f"{s.label}: {s.notes}" + (_model_error_text() if kind == "model_error" else ""))
    return out


def _model_error_text() -> str:
    """The engine error's current range, as the draws use it (C.MODEL_ERROR)."""
    t, i = C.MODEL_ERROR["training"], C.MODEL_ERROR["inference"]
    return f" Now e^-{t:g} to e^{t:g} for training, e^-{i:g} to e^{i:g} for inference."


# ----------------------------------------------------------------------------- from a comparison
ABSOLUTE = {"electricity": ("site", "electricity_usd_per_kwh"), "pue": ("site", "pue"),
            "grid": ("site", "grid_gco2e_per_kwh"), "utilisation": ("finance", "utilization"),
            "years": ("finance", "lifetime_years")}
RELATIVE = ("purchase_price", "cloud_price")  # factors on each configuration's own price


def check_uncertainty(spec: object, where: str = "uncertainty") -> list[str]:
    """Problems of a scenario's `uncertainty` section, each naming the input: a range with low above
    high, a zero or negative price or factor, a distribution that cannot be drawn."""
    if spec in (None, {}):
        return []
    if not isinstance(spec, dict):
        return [f"{where}: must be an object of input ranges"]
    out = []
    for key, value in spec.items():
        at = f"{where}.{key}"
        if key == "decide_by":
            if value not in ROWS:
                out.append(f"{at}: {value!r} is not one of {', '.join(ROWS)}")
            continue
        if key not in ABSOLUTE and key not in RELATIVE:
            out.append(f"{at}: not an uncertain input (known: {', '.join([*ABSOLUTE, *RELATIVE])}, decide_by)")
            continue
        if not isinstance(value, dict):
            out.append(f"{at}: must be an object with low, high and optionally distribution")
            continue
        out.extend(_check_range(value, at, key))
    return out


def _check_range(value: dict, at: str, key: str) -> list[str]:
    out = []
    low, high = value.get("low"), value.get("high")
    for name, x in (("low", low), ("high", high)):
        if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
            out.append(f"{at}.{name}: must be a number, not {x!r}")
    if out:
        return out
    if low <= 0 or high <= 0:
        what = "a price" if key in ("electricity", *RELATIVE) else "a value"
        out.append(f"{at}: {what} of zero or less cannot be drawn (low {low:g}, high {high:g})")
    if low > high:
        out.append(f"{at}: low {low:g} is above high {high:g}")
    if key == "utilisation" and high > 1:
        out.append(f"{at}.high: a utilisation above 1 (100%) cannot be drawn ({high:g})")
    distribution = value.get("distribution", "triangular")
    if distribution not in DISTRIBUTIONS:
        out.append(f"{at}.distribution: {distribution!r} cannot be drawn (one of {', '.join(DISTRIBUTIONS)})")
    unknown = sorted(set(value) - {"low", "high", "distribution"})
    if unknown:
        out.append(f"{at}: unknown field(s) {', '.join(unknown)}")
    return out


def specs_for(scenario, inputs_by_kind: dict[str, float]) -> dict[str, InputSpec]:
    """data/uncertainty.toml with the scenario's own ranges in their place (absolute values turned
    into factors on the scenario's value `inputs_by_kind[kind]`). Raises UncertaintyError."""
    spec = getattr(scenario, "uncertainty", None) or {}
    problems = check_uncertainty(spec)
    out = dict(default_specs())
    for key, value in spec.items():
        if key == "decide_by" or problems:
            continue
        base = inputs_by_kind.get(key, 1.0) if key in ABSOLUTE else 1.0
        if not base:
            problems.append(f"uncertainty.{key}: the scenario's value is 0, so a range around it cannot be drawn")
            continue
        if key in ABSOLUTE and not value["low"] <= base <= value["high"]:
            problems.append(f"uncertainty.{key}: the scenario's value {base:g} lies outside low {value['low']:g} – "
                            f"high {value['high']:g}")
            continue
        d = default_specs()[key]
        out[key] = InputSpec(key, d.label, value["low"] / base, value["high"] / base,
                             value.get("distribution", d.distribution), "given in the scenario", "", given=True)
    if problems:
        raise UncertaintyError("; ".join(problems))
    return out


def _price_range(catalogue, r, used: float | None) -> tuple[float, float] | None:
    """The lowest and highest dated price of the item an owned configuration is bought at, as factors
    on the price used; None when the catalogue holds fewer than two."""
    if catalogue is None or not used:
        return None
    entries = [e for e in r.option.cluster if not e.cloud and e.capex_usd_per_node is None]
    if len(entries) != 1:
        return None
    e = entries[0]
    system = catalogue.get("systems", e.item) is not None
    count = e.nodes if system else e.nodes * (e.per_node or 1)
    prices = [float(p["usd"]) * count for p in catalogue.items("prices") if p["item"] == e.item and p.get("usd")]
    if len(prices) < 2:
        return None
    return min(prices) / used, max(prices) / used


def _rate_range(groups, pricing: str) -> tuple[float, float] | None:
    rates = [dict(g.cloud.rates) for g in groups if g.cloud is not None]
    if len(rates) != 1 or len(rates[0]) < 2:
        return None
    chosen = rates[0].get(pricing) or rates[0].get("on_demand")
    return (min(rates[0].values()) / chosen, max(rates[0].values()) / chosen) if chosen else None


def basis_of(r, catalogue=None, specs: dict[str, InputSpec] | None = None) -> Basis:
    """One feasible configuration of a comparison as a Basis."""
    from gpudesk.core.estimate.cost import hourly

    specs = specs or default_specs()
    e, inp = r.estimate, r.inputs
    train = e.kind != "infer"
    err = C.MODEL_ERROR["training" if train else "inference"]
    t = e.time_s
    vendor = inp.groups[0].device.vendor or "other"
    b = Basis(r.name, f"{'training' if train else 'serving'}, {vendor}", t.likely / 3600.0,
              eff_low=min(1.0, t.low / t.likely * math.exp(err)), eff_high=max(1.0, t.high / t.likely / math.exp(err)),
              energy_kwh=e.energy_kwh.likely if e.energy_kwh else 0.0, pue=inp.site.pue,
              electricity=inp.site.electricity_usd_per_kwh, grid=inp.site.grid_gco2e_per_kwh,
              utilisation=inp.finance.utilization, years=inp.finance.lifetime_years,
              maintenance=inp.finance.maintenance_fraction_per_year, model_error=err,
              price_low=specs["purchase_price"].low, price_high=specs["purchase_price"].high,
              rate_low=specs["cloud_price"].low, rate_high=specs["cloud_price"].high)
    if not train and e.workload is not None:
        b.tokens = float(e.workload.output_tokens * max(1, e.workload.concurrency))
    rented = [g for g in inp.groups if g.cloud is not None]
    if rented:
        b.rate = sum(hourly(g, inp.finance.pricing) * g.nodes for g in rented)
        found = _rate_range(rented, inp.finance.pricing)
        if found and not specs["cloud_price"].given:
            b.rate_low, b.rate_high = min(found[0], 1.0), max(found[1], 1.0)
    elif e.cost.capex_parts:
        parts = e.cost.capex_parts
        b.capex_price, b.capex_other = parts["hardware"], sum(v for k, v in parts.items() if k != "hardware")
        found = _price_range(catalogue, r, b.capex_price)
        if found and not specs["purchase_price"].given:
            b.price_low, b.price_high = min(found[0], 1.0), max(found[1], 1.0)
    rates = e.cost.rent_rates
    if rates and e.cost.cloud_hours_per_run is not None and not rented:
        b.alt_rate = rates.get(inp.finance.pricing) or rates.get("on_demand")
        b.alt_hours = e.cost.cloud_hours_per_run.likely
        pricing_range = (min(rates.values()) / b.alt_rate, max(rates.values()) / b.alt_rate) if b.alt_rate else None
        if pricing_range and len(rates) > 1 and not specs["cloud_price"].given:
            b.rate_low, b.rate_high = min(pricing_range[0], 1.0), max(pricing_range[1], 1.0)
    return b


def decide_by(comparison, bases: list[Basis]) -> str:
    """The outcome the recommendation rests on: the scenario's choice, else cost (per million tokens
    when serving, per run when training) where every configuration has one, else time."""
    import numpy as np

    chosen = (getattr(comparison.scenario, "uncertainty", None) or {}).get("decide_by")
    if chosen:
        return chosen
    row = "cost_mtok" if any(b.tokens for b in bases) else "cost_run"
    ones = {k: np.ones((1, len(bases))) for k in KINDS}
    costs = outcomes(bases, ones, row)
    return row if np.isfinite(costs).all() else "time"


def why_for(comparison, catalogue=None, row: str | None = None) -> Why | None:
    """The analysis of a comparison's feasible configurations (None with fewer than two).
    Raises UncertaintyError when the scenario's ranges cannot be used."""
    ok = [r for r in comparison.results if r.ok and r.estimate.time_s is not None]
    if len(ok) < 2:
        return None
    first = ok[0].inputs
    values = {"electricity": first.site.electricity_usd_per_kwh, "pue": first.site.pue,
              "grid": first.site.grid_gco2e_per_kwh, "utilisation": first.finance.utilization,
              "years": first.finance.lifetime_years}
    specs = specs_for(comparison.scenario, values)
    bases = [basis_of(r, catalogue, specs) for r in ok]
    return analyse(bases, row or decide_by(comparison, bases), specs)


def top_inputs(estimate, inputs, n: int = 3) -> list[tuple[str, float, float]]:
    """The `n` inputs that move one configuration's cost per run most (its time where it has no cost),
    as (label, outcome at the low end, at the high end): what a drawn cluster's estimate rests on."""
    from types import SimpleNamespace

    import numpy as np

    if estimate is None or not estimate.feasible or estimate.time_s is None:
        return []
    r = SimpleNamespace(name="this cluster", estimate=estimate, inputs=inputs, option=None)
    bases = [basis_of(r)]
    row = "cost_run"
    ones = {k: np.ones((1, 1)) for k in KINDS}
    if not np.isfinite(outcomes(bases, ones, row)).all():
        row = "time"
    found = []
    for inp in build_inputs(bases, row):
        ends = outcomes(bases, _factors([inp], bases, {inp.key: np.array([inp.low, inp.high])}, 2), row)[:, 0]
        found.append((abs(ends[1] - ends[0]), inp.label.replace(" of this cluster", ""), float(ends[0]),
                      float(ends[1]), row))
    found.sort(key=lambda x: -x[0])
    return [(label, lo, hi) for _swing, label, lo, hi, _row in found[:n]]
