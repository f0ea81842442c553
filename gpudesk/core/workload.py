"""The workload rules, in one place: which fields each kind of run keeps, the precision a
training run falls back to, a model shape that no longer matches its parameter count, the
workload preset and catalogue model a scenario names, and the defaults the engine assumes.

`normalise_workload` applies them to a scenario's workload and says what it changed and why; the
compare view, the resolver behind `gpudesk estimate` and `gpudesk compare`, and so every scenario
file pass through it, so one scenario gives the same answer everywhere. `workload_problems` is the
same rules read strictly: the scenario loader refuses a file that breaks them rather than changing
what the file says. Qt-free.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from gpudesk.core.estimate.types import Workload

KINDS = ("train", "finetune", "infer")
INFERENCE_ONLY = ("prompt_tokens", "output_tokens", "concurrency")
TRAINING_ONLY = ("tokens", "global_batch_tokens", "sharding", "method")
INFERENCE_PRECISIONS = ("int8", "int4", "q8", "q4", "fp4")
TRAINING_FALLBACK_PRECISION = "bf16"
SHAPE_FIELDS = ("layers", "d_model", "heads", "kv_heads", "vocab")
# a dense transformer's layers hold about 12·layers·d_model² parameters; a shape that needs more
# than three times the stated parameter count is not this model's
SHAPE_SLACK = 3.0

# The engine's own defaults (gpudesk.core.estimate.types.Workload) for the fields every editor shows.
DEFAULTS = {key: Workload.__dataclass_fields__[key].default
            for key in ("seq_len", "prompt_tokens", "output_tokens", "concurrency")}

# Architecture fields a catalogue model entry gives the workload (names as in data/models.toml).
MODEL_FIELDS = {
    "params": "params", "active_params": "active_params", "layers": "layers", "d_model": "d_model",
    "heads": "heads", "kv_heads": "kv_heads", "head_dim": "head_dim", "ffn_dim": "ffn_dim", "vocab": "vocab",
    "experts": "experts", "experts_active": "experts_active", "shared_experts": "shared_experts",
    "expert_ffn_dim": "expert_ffn_dim", "dense_layers": "dense_layers", "kv_lora_rank": "kv_lora_rank",
    "qk_rope_head_dim": "qk_rope_head_dim", "sliding_window": "sliding_window", "sliding_share": "sliding_share",
    "tied_embeddings": "tied_embeddings", "attention": "attention",
}


@dataclass(frozen=True)
class WorkloadNote:
    """One change normalisation made: the field, the rule (a short key) and why, in words."""

    field: str  # "workload.precision"
    rule: str  # preset | model | default | inference-only | training-only | training-precision | method | shape
    text: str


@dataclass(frozen=True)
class NormalisedWorkload:
    workload: dict
    notes: tuple[WorkloadNote, ...] = ()
    # what cannot be mended (a preset or model the catalogue lacks): the field and the problem
    problems: tuple[str, ...] = ()
    preset: str = ""  # the workload preset that was expanded ('' when none)

    def changed(self, rule: str) -> list[WorkloadNote]:
        return [n for n in self.notes if n.rule == rule]


def suggest(value: str, choices) -> str:
    """' (did you mean ...?)' with ids that start like `value`, else the closest spellings."""
    choices = list(choices)
    lowered = value.lower()
    hints = [c for c in choices if c.startswith(lowered)] or [c for c in choices if lowered in c]
    if not hints:
        hints = difflib.get_close_matches(lowered, choices, n=3, cutoff=0.5)
    if not hints:
        return ""
    return " (did you mean " + " or ".join(f"'{h}'" for h in hints[:3]) + "?)"


def default_precision(kind: str | None) -> str:
    return "fp16" if kind == "infer" else "bf16"


def model_fields(row: dict) -> dict:
    """A catalogue model as workload fields (only the ones it states)."""
    out = {key: row[column] for key, column in MODEL_FIELDS.items() if row.get(column) is not None}
    if row.get("ffn_kind"):
        out["gated_ffn"] = row["ffn_kind"] != "gelu"
    return out


def shape_params(w: dict) -> float | None:
    """About how many parameters the workload's layers and width hold (None without a shape)."""
    if not (w.get("layers") and w.get("d_model")):
        return None
    return 12.0 * w["layers"] * w["d_model"] ** 2


def shape_fits(w: dict) -> bool:
    core = shape_params(w)
    return core is None or not w.get("params") or core <= SHAPE_SLACK * w["params"]


def find_preset(catalogue, preset_id: str) -> dict | None:
    if catalogue is None or not preset_id:
        return None
    return next((p for p in catalogue.presets() if p.get("id") == preset_id), None)


def workload_problems(w: dict) -> list[str]:
    """The rules read strictly, for a file: each field a normalisation would change, with why."""
    problems = []
    kind = w.get("kind")
    if kind == "infer":
        problems += [f"workload.{key}: not used for inference (kind 'infer')" for key in TRAINING_ONLY if key in w]
    elif kind in ("train", "finetune"):
        problems += [f"workload.{key}: only used for inference (kind 'infer')" for key in INFERENCE_ONLY if key in w]
        if w.get("precision") in INFERENCE_PRECISIONS:
            problems.append(f"workload.precision: '{w['precision']}' is an inference format; "
                            "train in fp32, tf32, fp16, bf16 or fp8")
    if kind != "finetune" and w.get("method") not in (None, "full"):
        problems.append("workload.method: LoRA and QLoRA apply to kind 'finetune'")
    if w.get("params") and not shape_fits(w):
        problems.append(f"workload.params: {w['params']:.3g} is too small for {w['layers']} layers of width "
                        f"{w['d_model']} (about {shape_params(w):.3g} parameters)")
    return problems


@dataclass
class _Work:
    w: dict
    notes: list[WorkloadNote] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def note(self, key: str, rule: str, text: str) -> None:
        self.notes.append(WorkloadNote(f"workload.{key}", rule, text))

    def drop(self, key: str, rule: str, why: str) -> None:
        if key in self.w:
            self.w.pop(key)
            self.note(key, rule, f"workload.{key} dropped: {why}")


def normalise_workload(doc: dict, catalogue=None) -> NormalisedWorkload:
    """The workload as every part of gpudesk estimates it: the preset and catalogue model filled in
    (the document's own fields win), the fields its kind does not use dropped, a training run's
    inference precision replaced by BF16, a shape too big for the parameter count dropped, and the
    precision and method defaults set. `doc` is left as it was; `notes` says each change."""
    work = _Work({})
    _expand(doc, catalogue, work)
    w = work.w
    kind = w.get("kind") or "train"
    if kind not in KINDS:
        work.problems.append(f"workload.kind: '{kind}' is not one of {', '.join(KINDS)}")
        kind = "train"
    if w.get("kind") != kind:
        w["kind"] = kind
        work.note("kind", "default", f"workload.kind: {kind}")
    _kind_rules(kind, work)
    if not shape_fits(w):
        why = (f"{w['layers']} layers of width {w['d_model']} hold about {shape_params(w):.3g} parameters, "
               f"more than the model's {w['params']:.3g}")
        for key in SHAPE_FIELDS + ("model",):
            work.drop(key, "shape", why)
    if not w.get("precision"):
        w["precision"] = default_precision(kind)
        work.note("precision", "default", f"workload.precision: {w['precision']} (the default for kind '{kind}')")
    return NormalisedWorkload(w, tuple(work.notes), tuple(work.problems), str(doc.get("preset") or ""))


def _expand(doc: dict, catalogue, work: _Work) -> None:
    """The preset's fields, then the catalogue model's, then the document's own."""
    merged: dict = {}
    preset_id = doc.get("preset")
    if preset_id and catalogue is not None:
        preset = find_preset(catalogue, preset_id)
        if preset is None:
            work.problems.append(f"workload.preset: '{preset_id}' is not a workload preset"
                                 f"{suggest(preset_id, [p['id'] for p in catalogue.presets()])}")
        else:
            merged.update(preset.get("workload", {}))
            work.note("preset", "preset", f"workload.preset: the fields of '{preset_id}' filled in")
    model_id = doc.get("model") or merged.get("model")
    if model_id and catalogue is not None:
        row = catalogue.get("models", model_id)
        if row is None:
            choices = [r["id"] for r in catalogue.items("models")]
            work.problems.append(f"workload.model: '{model_id}' is not a model in the catalogue{suggest(model_id, choices)}")
        else:
            fields = model_fields(row)
            merged.update(fields)
            work.note("model", "model", f"workload.model: the shape of '{model_id}' filled in")
    merged.update({k: v for k, v in doc.items() if k != "preset" or catalogue is None})
    work.w.update(merged)


def _kind_rules(kind: str, work: _Work) -> None:
    w = work.w
    if kind == "infer":
        for key in TRAINING_ONLY:
            work.drop(key, "training-only", "not used for inference")
        return
    for key in INFERENCE_ONLY:
        work.drop(key, "inference-only", "only used for inference")
    if kind == "train" and w.get("method") not in (None, "full"):
        work.drop("method", "method", "LoRA and QLoRA apply to fine-tuning")
    if kind == "finetune" and not w.get("method"):
        w["method"] = "lora"
        work.note("method", "default", "workload.method: lora (the default for fine-tuning)")
    if w.get("precision") in INFERENCE_PRECISIONS:
        old = w["precision"]
        w["precision"] = TRAINING_FALLBACK_PRECISION
        work.note("precision", "training-precision",
                  f"workload.precision: {old} is an inference format; training falls back to "
                  f"{TRAINING_FALLBACK_PRECISION}")
