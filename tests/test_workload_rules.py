"""One place for the workload rules: gpudesk.core.workload's normalisation, and the same figures
from the compare view (driven with pytest-qt) and from the command line (`gpudesk compare FILE
--json`) for every question the compare view offers, every workload preset and the workloads
the rules change."""

from __future__ import annotations

import json
import tomllib

import pytest

from gpudesk.cli import main
from gpudesk.core.compare import build_comparison
from gpudesk.core.scenario import ScenarioError, load_scenario, parse_scenario
from gpudesk.core.workload import DEFAULTS, normalise_workload, workload_problems
from gpudesk.ui.compare.presenter import ComparePresenter, example_scenarios, workload_from_editor

from .conftest import DATA, ROOT

EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.json"))
PRESETS = {p["id"]: p["workload"]["kind"] for p in tomllib.loads((DATA / "workloads.toml").read_text())["workload"]}
FIGURES = ("time", "throughput", "decode_user", "decode_total", "ttft")
TWO = [{"name": "8 × H100 SXM5", "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8}]},
       {"name": "8 × A100 SXM4", "cluster": [{"item": "a100-sxm4-80gb", "per_node": 8}]}]
# workloads the rules change on the way in: a preset whose model was shrunk below its layers'
# size, a serving load with the engine's default prompt and answer, a 4-bit serving preset
EDGE = {
    "shrunk-preset": {"preset": "nanochat-d20", "kind": "train", "params": 100e6},
    "serve-defaults": {"kind": "infer", "params": 8e9, "concurrency": 4},
    "serve-int4": {"preset": "llama3-70b-serve", "kind": "infer", "precision": "int4"},
}


# ----------------------------------------------------------------------------- the rules, Qt-free
def test_inference_keeps_only_its_fields_and_says_so():
    doc = {"kind": "infer", "params": 8e9, "tokens": 1e9, "sharding": "zero3", "method": "lora", "concurrency": 2}
    out = normalise_workload(doc)
    assert out.workload == {"kind": "infer", "params": 8e9, "concurrency": 2, "precision": "fp16"}
    assert {n.field for n in out.changed("training-only")} == {"workload.tokens", "workload.sharding",
                                                               "workload.method"}
    assert doc["tokens"] == 1e9  # the document is left as it was


def test_training_falls_back_to_bf16_from_an_inference_format():
    out = normalise_workload({"kind": "train", "params": 1e9, "precision": "int4", "prompt_tokens": 10,
                              "method": "qlora"})
    assert out.workload["precision"] == "bf16"
    assert "prompt_tokens" not in out.workload and "method" not in out.workload
    [note] = out.changed("training-precision")
    assert note.field == "workload.precision" and "int4 is an inference format" in note.text
    assert normalise_workload({"kind": "finetune", "params": 1e9}).workload["method"] == "lora"


def test_a_shape_bigger_than_the_parameter_count_is_dropped(catalogue):
    out = normalise_workload(EDGE["shrunk-preset"], catalogue)
    w = out.workload
    assert w["params"] == 100e6 and w["tokens"] == 11.2e9  # the preset's data, the document's size
    assert not {"layers", "d_model", "heads", "vocab"} & set(w)
    assert {n.field for n in out.changed("shape")} >= {"workload.layers", "workload.d_model"}
    assert "hold about 3.93e+08 parameters, more than the model's 1e+08" in out.changed("shape")[0].text
    # the scenario loader reads the same rule strictly, on the fields a file states
    problems = workload_problems({"kind": "train", "params": 100e6, "layers": 20, "d_model": 1280})
    assert problems == ["workload.params: 1e+08 is too small for 20 layers of width 1280 (about 3.93e+08 parameters)"]


def test_an_unknown_preset_is_a_problem_that_names_the_field(catalogue):
    out = normalise_workload({"preset": "nanochat-d2O", "kind": "train"}, catalogue)
    assert out.problems == ("workload.preset: 'nanochat-d2O' is not a workload preset (did you mean "
                            "'nanochat-d20' or 'nanochat-d16'?)",)
    assert "params" not in out.workload


def test_a_file_breaking_a_rule_is_refused_not_mended(tmp_path):
    doc = {"gpudesk_scenario": 1, "workload": {"kind": "infer", "params": 1e9, "tokens": 5e9},
           "cluster": [{"item": "h100-sxm5-80gb"}]}
    with pytest.raises(ScenarioError) as err:
        parse_scenario(doc, "f.json")
    assert "workload.tokens: not used for inference (kind 'infer')" in str(err.value)


def test_the_editor_workload_goes_through_the_same_rules(catalogue):
    values = {"kind": "infer", "params": 70.6e9, "tokens": 3e9, "seq_len": 2048, "precision": "fp16",
              "prompt_tokens": 1024, "output_tokens": 512, "concurrency": 20}
    out = workload_from_editor(values, {"method": "lora", "layers": 80, "d_model": 8192}, catalogue)
    assert out.workload == {"kind": "infer", "params": 70.6e9, "seq_len": 2048, "precision": "fp16",
                            "prompt_tokens": 1024, "output_tokens": 512, "concurrency": 20, "layers": 80,
                            "d_model": 8192}
    assert [n.field for n in out.notes] == ["workload.method"]


def test_the_title_follows_the_comparison_without_a_window():
    presenter = ComparePresenter()
    scenario = load_scenario(ROOT / "resources" / "examples" / "a100-vs-jetson-nanos.json")
    presenter.begin_load(scenario, as_preset=True)
    presenter.preset_index = 2
    doc = {"workload": {"kind": "train", "params": 561e6}, "compare": TWO}
    first = presenter.follow(doc, "", "generated?")
    assert first.question == scenario.report["question"] and first.preset_index == 2
    assert first.subtitle == scenario.description
    edited = presenter.follow({**doc, "workload": {"kind": "train", "params": 1e9}}, first.question, "generated?")
    assert (edited.question, edited.preset_index) == ("generated?", 0)
    presenter.question_typed("Mine")
    assert presenter.follow(doc, "Mine", "generated?").question is None  # a typed title is kept


# ----------------------------------------------------------------------------- GUI against CLI
def _cases(tmp_path) -> dict:
    cases = {p.stem: p for p in EXAMPLES}
    for name, workload in [(f"preset-{i}", {"preset": i, "kind": k}) for i, k in PRESETS.items()] + list(EDGE.items()):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"gpudesk_scenario": 1, "name": name, "workload": workload, "compare": TWO}))
        cases[name] = path
    return cases


def _figures(rows) -> dict:
    return {row["key"]: [c["value"] for c in row["cells"]] for row in rows if row["key"] in FIGURES}


def _same(shown: list, expected: list, where) -> None:
    """Figure by figure to 1e-9 relative; a figure one side lacks (a configuration that cannot
    run) the other side lacks too."""
    assert [v is None for v in shown] == [v is None for v in expected], where
    assert [v for v in shown if v is not None] == pytest.approx([v for v in expected if v is not None], rel=1e-9), where


def test_the_compare_view_offers_every_shipped_question():
    offered = sorted(p.resolve() for _name, p in example_scenarios())
    with_compare = [p.resolve() for p in EXAMPLES if load_scenario(p).compare]
    assert offered == with_compare and len(offered) >= 6  # the single-cluster example opens as one column


def test_the_view_and_the_command_line_give_the_same_figures(qtbot, catalogue, capsys, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from gpudesk.ui.compare.view import CompareView

    def refuse(_parent, title, text, *_args):
        raise AssertionError(f"{title}: {text}")  # a file the view cannot open fails the test, not hangs it

    monkeypatch.setattr(QMessageBox, "warning", staticmethod(refuse))

    view = CompareView()
    qtbot.addWidget(view)
    view.set_catalogue(catalogue)
    cases = _cases(tmp_path)
    assert len(cases) == len(EXAMPLES) + len(PRESETS) + len(EDGE)
    for name, path in cases.items():
        assert view.load_path(path, as_preset=True), name
        shown = view.comparison
        gui = {row.key: [c.value for c in row.cells] for row in shown.rows if row.key in FIGURES}
        assert main(["compare", str(path), "--json"]) == 0, name
        cli = json.loads(capsys.readouterr().out)
        assert [c["name"] for c in cli["configurations"]] == shown.names, name
        assert set(gui) == set(_figures(cli["rows"])) and ("time" in gui or "decode_user" in gui), name
        for key, values in _figures(cli["rows"]).items():
            _same(gui[key], values, (name, key))
        core = build_comparison(load_scenario(path), catalogue)
        for key in gui:
            _same(gui[key], [c.value for c in core.row(key).cells], (name, key, "build_comparison"))
    # what the edge cases are about: the same workload in both, after the rules
    view.load_path(cases["serve-defaults"], as_preset=True)
    assert (view.prompt.value(), view.output.value()) == (DEFAULTS["prompt_tokens"], DEFAULTS["output_tokens"])
    view.load_path(cases["serve-int4"], as_preset=True)
    assert view.precision.currentData() == "int4" and view.comparison.results[0].inputs.workload.precision == "int4"
    view.load_path(cases["shrunk-preset"], as_preset=True)
    assert view.comparison.results[0].inputs.workload.layers is None
