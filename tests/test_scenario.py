"""The scenario document: valid files load, bad ones are refused with the field and the problem."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.scenario import ScenarioError, load_scenario, loads_scenario, parse_scenario, save_scenario

from .conftest import ROOT

EXAMPLE = {
    "gpudesk_scenario": 1,
    "name": "nanochat d20 on 8xH100",
    "workload": {"kind": "train", "params": 561e6, "tokens": 11.2e9, "seq_len": 2048, "precision": "bf16",
                 "layers": 20, "d_model": 1280},
    "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8, "nodes": 1, "intra": "nvlink4", "inter": "ib-ndr-400"}],
    "site": {"region": "us-avg", "pue": 1.2, "electricity_usd_per_kwh": 0.15},
    "finance": {"rent": "aws-p5.48xlarge", "lifetime_years": 4, "utilization": 0.6},
}


def problems_of(doc) -> list[str]:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(doc, "test.json")
    return err.value.problems


def test_the_issue_example_parses():
    s = parse_scenario(EXAMPLE)
    assert s.workload["params"] == 561e6 and s.cluster[0].per_node == 8 and s.finance["rent"] == "aws-p5.48xlarge"


def test_every_shipped_example_parses():
    for path in (ROOT / "resources" / "examples").glob("*.json"):
        assert load_scenario(path).options(), path.name


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["workload"].update(parms=5), "workload.parms: unknown key (did you mean 'params'?)"),
    (lambda d: d["workload"].pop("kind"), "workload.kind: missing"),
    (lambda d: d["workload"].update(params="lots"), "workload.params: must be a number"),
    (lambda d: d["workload"].update(params=-1), "workload.params: must be greater than 0"),
    (lambda d: d["workload"].update(seq_len=2048.5), "workload.seq_len: must be a whole number"),
    (lambda d: d["workload"].update(precision="fp12"), "workload.precision: 'fp12' is not one of"),
    (lambda d: d["workload"].update(prompt_tokens=5), "workload.prompt_tokens: only used for inference"),
    (lambda d: d["workload"].update(params=1e6), "is too small for 20 layers"),
    (lambda d: d["site"].update(pue=0.5), "site.pue: must be at least 1"),
    (lambda d: d["finance"].update(utilization=1.5), "finance.utilization: must be at most 1"),
    (lambda d: d["cluster"][0].update(nodes=0), "cluster[0].nodes: must be at least 1"),
    (lambda d: d["cluster"][0].update(cloud="aws-p5.48xlarge"), "cluster[0]: name exactly one of 'item'"),
    (lambda d: d["cluster"][0].update(overrides={"tdp": 5}), "cluster[0].overrides.tdp: not a figure that can be overridden (did you mean 'tdp_w'?)"),
    (lambda d: d.pop("cluster"), "cluster: missing"),
    (lambda d: d.update(cluster="h100"), "cluster: must be a list"),
    (lambda d: d.update(colour="red"), "colour: unknown key"),
])
def test_bad_fields_are_named(mutate, expected):
    doc = json.loads(json.dumps(EXAMPLE))
    mutate(doc)
    problems = problems_of(doc)
    assert any(expected in p for p in problems), problems


def test_newer_version_is_refused_with_advice():
    doc = dict(EXAMPLE, gpudesk_scenario=2)
    (message,) = problems_of(doc)
    assert "version 2" in message and "newer" in message and "update gpudesk" in message


def test_not_a_scenario():
    assert "not a gpudesk scenario" in problems_of({"workload": {}})[0]
    assert "must be a JSON object" in problems_of([1, 2])[0]


def test_invalid_json_names_line_and_column():
    with pytest.raises(ScenarioError) as err:
        loads_scenario('{"gpudesk_scenario": 1,\n "workload": {"kind": "train",,}}', "x.json")
    assert "line 2" in str(err.value) and "x.json" in str(err.value)
    with pytest.raises(ScenarioError) as err:
        loads_scenario('{"gpudesk_scenario": 1, "workload": {"kind": "train", "params": NaN}}')
    assert "NaN" in str(err.value)


def test_files_that_are_not_text_or_too_big(tmp_path):
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe\x00\x01garbage")
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(binary)
    with pytest.raises(ScenarioError, match="cannot be read"):
        load_scenario(tmp_path / "missing.json")


def test_compare_lists_are_validated():
    doc = json.loads(json.dumps(EXAMPLE))
    doc.pop("cluster")
    doc["compare"] = [{"name": "a", "cluster": [{"item": "x"}]}, {"name": "a", "cluster": []}]
    problems = problems_of(doc)
    assert any("names must differ" in p for p in problems)
    assert any("compare[1].cluster: must list at least one" in p for p in problems)
    doc["compare"] = [{"name": str(i), "cluster": [{"item": "x"}]} for i in range(7)]
    assert any("one to six" in p for p in problems_of(doc))


def test_save_is_atomic_and_round_trips(tmp_path):
    s = parse_scenario(EXAMPLE)
    path = tmp_path / "s.json"
    save_scenario(s, path)
    again = load_scenario(path)
    assert again.to_dict() == s.to_dict()
    assert not list(tmp_path.glob(".*.tmp"))


def test_hardware_the_catalogue_lacks_is_named_by_place_before_anything_opens_it(catalogue):
    from gpudesk.core.resolve import missing_entries

    one = {"gpudesk_scenario": 1, "name": "t", "workload": {"kind": "train", "params": 1e9},
           "cluster": [{"item": "h100-sxm5-80gb", "per_node": 8}, {"item": "h100-sxm5-80gbb", "per_node": 8}]}
    problems = missing_entries(parse_scenario(one, "t"), catalogue)
    assert len(problems) == 1 and problems[0].startswith(
        "cluster[1].item: 'h100-sxm5-80gbb' is not an accelerator or system in the catalogue (did you mean "
        "'h100-sxm5-80gb'")
    two = {"gpudesk_scenario": 1, "name": "t", "workload": {"kind": "train", "params": 1e9},
           "compare": [{"name": "a", "cluster": [{"item": "dgx-h100"}]},
                       {"name": "b", "cluster": [{"cloud": "aws-p5.48xlargee", "instances": 1}]}]}
    problems = missing_entries(parse_scenario(two, "t"), catalogue)
    assert len(problems) == 1 and problems[0].startswith(
        "compare[1].cluster[0].cloud: 'aws-p5.48xlargee' is not a cloud offering in the catalogue")
    # every shipped example names only what the catalogue holds, so each opens in Compare and the canvas
    examples = sorted((ROOT / "resources" / "examples").glob("*.json"))
    assert len(examples) >= 10
    assert {p.name: missing_entries(load_scenario(p), catalogue) for p in examples} == {p.name: [] for p in examples}
