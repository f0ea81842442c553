"""Which questions the comparison raises that only the user can answer: the model (its parameter
count) that ran a file, and the prompt and answer lengths of a run. Qt-free; the Benchmarks view
shows them."""

from __future__ import annotations

from collections.abc import Iterable


def model_questions(versus: Iterable) -> tuple[list[dict], list[dict]]:
    """(model questions, length questions) from a comparison's Versus rows, one question per key:
    the hardware signature (or the import) for a model, the import for lengths (they belong to one
    run). Each: key, title (the file), measurements (how many it holds back), reason."""
    models: dict[str, dict] = {}
    lengths: dict[str, dict] = {}
    for v in versus:
        if v.comparable:
            continue
        m = v.measurement
        if m.workload.get("language_model") is False:
            continue  # named non-language models (image, speech ...): gpudesk estimates none of them
        if "parameter count is not known" in v.reason:
            # remembered for the next files of this model's signature (or of this import)
            key = m.hardware_key if m.hardware_key else f"import:{m.import_id}"
            q = models.setdefault(key, {"key": key, "title": m.source_file, "measurements": 0,
                                        "reason": "the file does not name the model that ran"})
            q["measurements"] += 1
        elif "prompt length is not known" in v.reason or "generated tokens per request" in v.reason:
            key = f"import:{m.import_id}"  # lengths belong to one run, not to the hardware
            q = lengths.setdefault(key, {"key": key, "title": m.source_file, "measurements": 0,
                                         "reason": "the file does not say how long the prompts and answers were"})
            q["measurements"] += 1
    return list(models.values()), list(lengths.values())
