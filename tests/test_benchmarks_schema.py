"""gpudesk's own benchmark format: the JSON Schema, its documented example, validation messages,
export of stored measurements, and re-importing an export (nothing stored twice)."""

from __future__ import annotations

import json

import pytest

from gpudesk.core.benchmarks import gpudesk_schema
from gpudesk.core.benchmarks.gpudesk_schema import export_measurements, schema, validate
from gpudesk.core.benchmarks.store import count_measurements, import_files, stored_measurements

from .test_benchmarks_importers import LLAMA_4080, LLAMA_CPU, LLAMA_M5, NCCL, SGLANG, TRTLLM

SUPPORTED = {"$ref", "type", "const", "enum", "required", "properties", "additionalProperties", "items", "minItems",
             "minimum", "exclusiveMinimum", "pattern"}
ANNOTATIONS = {"$schema", "$id", "title", "description", "$defs"}


def walk(node, path="schema"):
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    yield from walk(sub, f"{path}.{key}.{name}")
            elif isinstance(value, dict):
                yield from walk(value, f"{path}.{key}")


def test_the_schema_uses_only_what_the_validator_checks():
    doc = schema()
    assert doc["$schema"].endswith("2020-12/schema")
    for path, node in walk(doc):
        unknown = set(node) - SUPPORTED - ANNOTATIONS
        assert not unknown, (path, unknown)
        if path.count(".") >= 3 and "description" not in node and "$ref" not in node:
            assert "type" in node or "enum" in node or "const" in node, path


def test_the_documented_example_validates_and_imports():
    example = json.loads(gpudesk_schema.example_path().read_text())
    assert validate(example) == []
    assert example["description"] and all("metric" in m for m in example["measurements"])
    r = gpudesk_schema.parse(gpudesk_schema.example_path())
    assert len(r.measurements) == 3 and not r.errors


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("measurements"), "'measurements' is required"),
    (lambda d: d.update(gpudesk_benchmark=2), "should be 1"),
    (lambda d: d["measurements"][0].pop("unit"), "'unit' is required"),
    (lambda d: d["measurements"][0].update(value=-3), "below the minimum"),
    (lambda d: d["measurements"][0].update(value="fast"), "should be number"),
    (lambda d: d["measurements"][0].update(unit="furlongs"), "is not one of"),
    (lambda d: d["measurements"][0].update(speed=3), "unknown key"),
    (lambda d: d["workload"].update(params=0), "must be more than 0"),
    (lambda d: d["hardware"].update(accelerator="H100 SXM"), "does not match"),
    (lambda d: d["workload"].update(precision="fp12"), "is not one of"),
])
def test_validation_messages_name_the_place(change, words):
    doc = json.loads(gpudesk_schema.example_path().read_text())
    change(doc)
    errors = validate(doc)
    assert any(words in e for e in errors), errors


def test_invalid_measurements_are_skipped_with_their_place():
    doc = json.loads(gpudesk_schema.example_path().read_text())
    doc["measurements"][1]["value"] = -1
    doc["measurements"][2]["metric"] = "prefill_tokens_per_s"  # given in ms: the wrong dimension
    r = gpudesk_schema.parse(json.dumps(doc), "mine.json")
    assert [m.metric for m in r.measurements] == ["prefill_tokens_per_s"]
    places = [p.place for p in r.problems if p.severity == "warning"]
    assert places == ["record 0 (line 1), measurements[1]", "record 0 (line 1), measurements[2]"]


def test_export_validates_and_reimports_as_duplicates(catalogue, tmp_path):
    import_files(catalogue, [LLAMA_4080, LLAMA_M5, LLAMA_CPU, TRTLLM, NCCL, SGLANG])
    stored = stored_measurements(catalogue)
    doc = export_measurements(stored, description="everything")
    assert validate(doc) == []
    assert doc["measurements"][0]["source"]["format"] == "llama-bench"
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    before = count_measurements(catalogue)
    report = import_files(catalogue, [path])
    assert report.ok and report.files[0].format == "gpudesk"
    assert report.files[0].read == len(stored) and report.files[0].stored == 0
    assert count_measurements(catalogue) == before
    # and into an empty database, the same figures come back
    back = {(m.metric, m.statistic, m.value, m.accelerator_id, m.accelerator_count, m.match_confidence, m.cpu_only)
            for m in gpudesk_schema.parse(path).measurements}
    assert back == {(m.metric, m.statistic, m.value, m.accelerator_id, m.accelerator_count, m.match_confidence,
                     m.cpu_only) for m in stored}
