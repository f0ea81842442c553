"""What a recommendation rests on (issue 30): the closed form agrees with the engine, every crossover
really flips the winner, the probabilities match a case worked by hand, and bad ranges are refused
naming the input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gpudesk.core.compare import build_comparison
from gpudesk.core.defend import (
    Basis,
    InputSpec,
    UncertaintyError,
    _factors,
    _winner,
    analyse,
    build_inputs,
    check_uncertainty,
    default_specs,
    outcomes,
    why_for,
)
from gpudesk.core.scenario import ScenarioError, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"


def _hand_case() -> list[Basis]:
    """A: owned, 100 kWh a run at $0.30/kWh and nothing else to pay ($30); B: rented, $3.30/h for
    10 h ($33). Only the electricity price is uncertain."""
    a = Basis("A", "x", 10.0, energy_kwh=100.0, pue=1.0, electricity=0.3, capex_price=0.0, model_error=0.0)
    b = Basis("B", "y", 10.0, rate=3.3, rate_low=1.0, rate_high=1.0, model_error=0.0)
    return [a, b]


def _only_electricity() -> dict:
    from dataclasses import replace

    return {k: (s if k == "electricity" or s.low is None else replace(s, low=1.0, high=1.0))
            for k, s in default_specs().items()}


def test_the_probabilities_match_a_case_worked_by_hand():
    # electricity x0.5 to x2, log-triangular with its mode at x1: A wins while 100 kWh x $0.30 x f < $33,
    # that is f < 1.1; P = 1 - (ln2 - ln1.1)^2 / ((ln2 - ln0.5)(ln2 - 0)) = 0.628
    expected = 1 - (math.log(2) - math.log(1.1)) ** 2 / ((math.log(2) - math.log(0.5)) * math.log(2))
    why = analyse(_hand_case(), "cost_run", _only_electricity(), draws=40_000)
    assert why.winner == 0
    assert why.probabilities[0] == pytest.approx(expected, abs=0.01)
    assert sum(why.probabilities) == pytest.approx(1.0)
    # the same seed gives the same answer
    assert analyse(_hand_case(), "cost_run", _only_electricity(), draws=40_000).probabilities == why.probabilities
    electricity = next(b for b in why.bars if b.input.kind == "electricity")
    assert electricity.crossover.value == pytest.approx(1.1, rel=1e-6)
    assert electricity.crossover.text == "$0.330/kWh" and why.names[electricity.crossover.winner] == "B"
    assert why.sentence == "B would be cheaper per run if electricity cost more than $0.330/kWh."


def _winner_with(bases, inputs, key, factor, row):
    return int(_winner(outcomes(bases, _factors(inputs, bases, {key: np.array([factor])}, 1), row))[0])


def _check_crossovers(why, bases) -> int:
    inputs = [b.input for b in why.bars]
    checked = 0
    for bar in why.bars:
        x = bar.crossover
        if x is None:
            # no value in range changes it: both ends keep the winner
            for end in (bar.input.low, bar.input.high):
                assert _winner_with(bases, inputs, bar.input.key, end, why.row) == why.winner, bar.input.label
            continue
        step = 1.0 + 1e-6 if x.value > 1 else 1.0 - 1e-6
        assert _winner_with(bases, inputs, bar.input.key, x.value * step, why.row) == x.winner, bar.input.label
        assert _winner_with(bases, inputs, bar.input.key, x.value / step ** 2, why.row) == why.winner, bar.input.label
        checked += 1
    return checked


def test_every_crossover_changes_the_winner_just_past_it(catalogue):
    from gpudesk.core.defend import basis_of

    checked = 0
    for path in sorted(EXAMPLES.glob("*.json")):
        comp = build_comparison(load_scenario(path), catalogue)
        for row in ("cost_run", "time", "energy", "co2", "break_even"):
            ok = [r for r in comp.results if r.ok and r.estimate.time_s is not None]
            if len(ok) < 2:
                continue
            bases = [basis_of(r, catalogue) for r in ok]
            why = analyse(bases, row, draws=200)
            checked += _check_crossovers(why, bases)
    checked += _check_crossovers(analyse(_hand_case(), "cost_run", _only_electricity(), draws=200), _hand_case())
    assert checked >= 5  # the examples do have crossovers to check


def test_the_closed_form_gives_the_engine_s_own_figures(catalogue):
    from gpudesk.core.defend import basis_of

    comp = build_comparison(load_scenario(EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json"), catalogue)
    bases = [basis_of(r, catalogue) for r in comp.results]
    ones = {k: np.ones((1, len(bases))) for k in ("efficiency",)}
    cost = outcomes(bases, ones, "cost_run")[0]
    energy = outcomes(bases, ones, "energy")[0]
    for i, r in enumerate(comp.results):
        assert cost[i] == pytest.approx(r.estimate.cost.owned_usd_per_run.likely, rel=1e-9)
        assert energy[i] == pytest.approx(r.estimate.energy_kwh.likely, rel=1e-9)
    months = outcomes(bases, ones, "break_even")[0]
    for i, r in enumerate(comp.results):
        assert months[i] == pytest.approx(r.estimate.cost.break_even_months, rel=1e-6)


def test_shared_inputs_are_drawn_once_and_the_engine_error_once_per_path():
    same_path = [Basis("A", "training, NVIDIA", 10.0, rate=1.0, rate_low=1.0, rate_high=1.0),
                 Basis("B", "training, NVIDIA", 11.0, rate=1.0, rate_low=1.0, rate_high=1.0)]
    inputs = build_inputs(same_path, "time")
    assert [i.key for i in inputs] == ["model_error:training, NVIDIA"] and inputs[0].configs == (0, 1)
    # one error for both: the 10% faster one wins every draw, however wide the error
    assert analyse(same_path, "time").probabilities == [1.0, 0.0]
    apart = [Basis("A", "training, NVIDIA", 10.0), Basis("B", "training, AMD", 11.0)]
    p = analyse(apart, "time").probabilities
    assert 0.5 < p[0] < 0.75  # two independent errors of e^±MODEL_ERROR: B often wins
    # the assumptions state the error the draws used, read from the engine's constants, not a copy
    from gpudesk.core.estimate import constants as C

    said = analyse(apart, "time").assumptions[-1]
    t, i = C.MODEL_ERROR["training"], C.MODEL_ERROR["inference"]
    assert said.startswith("Engine error: ") and said.endswith(
        f"Now e^-{t:g} to e^{t:g} for training, e^-{i:g} to e^{i:g} for inference.")


@pytest.mark.parametrize(("spec", "message"), [
    ({"electricity": {"low": 0.4, "high": 0.1}}, "uncertainty.electricity: low 0.4 is above high 0.1"),
    ({"electricity": {"low": 0, "high": 0.3}}, "uncertainty.electricity: a price of zero or less cannot be drawn"),
    ({"purchase_price": {"low": -1, "high": 1.2}}, "uncertainty.purchase_price: a price of zero or less"),
    ({"pue": {"low": 1.1, "high": 1.5, "distribution": "normal"}},
     "uncertainty.pue.distribution: 'normal' cannot be drawn"),
    ({"utilisation": {"low": 0.3, "high": 1.4}}, "uncertainty.utilisation.high: a utilisation above 1"),
    ({"wind": {"low": 1, "high": 2}}, "uncertainty.wind: not an uncertain input"),
    ({"decide_by": "vibes"}, "uncertainty.decide_by: 'vibes' is not one of"),
])
def test_bad_ranges_are_refused_naming_the_input(spec, message):
    problems = check_uncertainty(spec)
    assert any(p.startswith(message) for p in problems), problems
    doc = json.loads((EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json").read_text())
    doc["uncertainty"] = spec
    with pytest.raises(ScenarioError) as err:
        parse_scenario(doc)
    assert message in str(err.value)


def test_a_range_that_leaves_out_the_scenario_s_value_keeps_the_comparison_without_an_analysis(catalogue):
    doc = json.loads((EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json").read_text())
    doc["uncertainty"] = {"pue": {"low": 1.05, "high": 1.2}}  # the scenario says 1.3
    comp = build_comparison(parse_scenario(doc), catalogue)
    assert comp.why is None and "uncertainty.pue: the scenario's value 1.3 lies outside" in comp.why_error
    assert comp.row("cost_run") is not None  # the comparison itself stands
    doc["uncertainty"] = {"pue": {"low": 1.1, "high": 1.6}, "decide_by": "co2"}
    comp = build_comparison(parse_scenario(doc), catalogue)
    pue = next(b for b in comp.why.bars if b.input.kind == "pue")
    assert comp.why.row == "co2" and pue.input.low * 1.3 == pytest.approx(1.1) and pue.input.high * 1.3 == pytest.approx(1.6)


def test_the_recommendation_and_the_json_carry_the_analysis(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json"), catalogue)
    why = comp.why
    assert why.row == "cost_run" and why.names[why.winner] == "8 × B200"
    assert f"8 × B200 has the lowest cost per run in {why.probabilities[why.winner]:.0%}" in comp.recommendation
    b200 = comp.names.index("8 × B200")
    assert comp.row("cost_run").cells[b200].text.endswith(f"\n{why.probabilities[why.winner]:.0%} of draws")
    effects = [b.effect for b in why.bars]
    assert effects == sorted(effects, reverse=True)  # sorted by effect
    from gpudesk.core.compare import comparison_json

    data = comparison_json(comp)["why"]
    assert data["winner"] == "8 × B200" and data["draws"] == 2000 and len(data["inputs"]) == len(why.bars)
    assert set(data["probability_of_winning"]) == set(why.names)
    json.dumps(data, allow_nan=False)  # plain JSON, no NaN or infinity


def test_the_default_ranges_are_data_with_their_sources(catalogue):
    specs = default_specs()
    assert set(specs) >= {"electricity", "pue", "grid", "utilisation", "years", "purchase_price", "cloud_price",
                          "efficiency", "model_error"}
    sources = catalogue.sources()
    for s in specs.values():
        assert isinstance(s, InputSpec) and s.notes
        assert not s.source or s.source in sources, s.source
        if s.low is not None:
            assert 0 < s.low <= 1 <= s.high


def test_fewer_than_two_runnable_configurations_have_nothing_to_weigh(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "llama3-70b-fp16-one-or-two-gpus.json"), catalogue)
    assert why_for(comp, catalogue) is None and comp.why is None and comp.why_error == ""
    with pytest.raises(UncertaintyError):
        from gpudesk.core.defend import specs_for

        specs_for(parse_scenario({**json.loads((EXAMPLES / "own-or-rent-8xh100-mi300x-b200.json").read_text()),
                                  "uncertainty": {"grid": {"low": 1, "high": 2}}}), {"grid": 0.0})


def test_the_seed_question_s_crossover_reads_as_a_buyer_would_say_it(catalogue):
    comp = build_comparison(load_scenario(EXAMPLES / "nanochat-8xh100-rented-vs-dgx-spark.json"), catalogue)
    why = comp.why
    assert why.names[why.winner] == "DGX Spark (owned)"
    utilisation = next(b for b in why.bars if b.input.kind == "utilisation")
    assert utilisation.crossover is not None and why.names[utilisation.crossover.winner] == "8 × H100 rented (Lambda)"
    assert (f"8 × H100 rented (Lambda) would be cheaper per run if the owned hardware ran below "
            f"{utilisation.crossover.text} utilisation") in why.sentence
    assert utilisation.crossover.text.endswith("%") and utilisation.crossover.value < 1
