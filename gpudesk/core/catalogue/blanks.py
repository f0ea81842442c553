"""Why a catalogue cell is blank: the figure does not apply to the item, its maker does not publish
it, or the catalogue simply does not know it. Decided from the data only: a record's notes that
say a field was left out (and why), a link field set to an explicit empty value or a system with
one accelerator (nothing to link), and for the FP8 and FP4 rates, an architecture none of whose
catalogued devices has a rate at that precision while this device's source publishes its 16-bit
rates. Anything else is unknown. No Qt."""

from __future__ import annotations

import re
from dataclasses import dataclass

NOT_APPLICABLE, NOT_PUBLISHED, UNKNOWN = "not applicable", "not published", "unknown"

# Rates that arrived with particular architectures: their absence across a whole architecture,
# next to published 16-bit rates, means the architecture has no such unit.
GENERATIONAL = {"fp8_tflops": "FP8", "fp4_tflops": "FP4", "bf16_tflops": "BF16", "fp16_tflops": "FP16"}
SIXTEEN_BIT = ("bf16_tflops", "fp16_tflops")


@dataclass(frozen=True)
class Blank:
    reason: str  # NOT_APPLICABLE | NOT_PUBLISHED | UNKNOWN
    text: str  # a sentence for the tooltip

    @property
    def short(self) -> str:
        """What the cell shows: 'n/a' where the figure does not apply, else a dash (the tooltip says which)."""
        return "n/a" if self.reason == NOT_APPLICABLE else "—"


def _sentences(notes: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.;])\s+", notes or "") if s.strip()]


def _left_out(record: dict, field: str) -> str:
    """The notes' sentence saying `field` was left out, if any."""
    notes = record.get("notes") or ""
    if field not in notes:  # most notes never name the field: no sentence to look through
        return ""
    for sentence in _sentences(notes):
        if re.search(rf"\b{re.escape(field)}\b", sentence) and re.search(r"\bleft out\b|\bnot published\b|\bpublishes no",
                                                                         sentence, re.IGNORECASE):
            return sentence
    return ""


def why_blank(catalogue, kind: str, record: dict, field: str, label: str = "") -> Blank | None:
    """Why `record[field]` is empty; None when it is not."""
    value = record.get(field)
    if value is not None and value != "":
        return None
    label = label or field
    sentence = _left_out(record, field)
    if sentence:
        return Blank(NOT_PUBLISHED, f"Not published. From the entry's notes: {sentence}")
    if field == "intra_link" and ("intra_link" in record and record.get("intra_link") == ""):
        return Blank(NOT_APPLICABLE, "Not applicable: one accelerator, nothing inside the machine to link.")
    if kind == "systems" and field == "intra_link" and (record.get("accelerator_count") or 0) == 1:
        return Blank(NOT_APPLICABLE, "Not applicable: one accelerator, nothing inside the machine to link.")
    if kind == "systems" and field == "nic_count" and not record.get("nic"):
        return Blank(NOT_APPLICABLE if record.get("nic") == "" else UNKNOWN,
                     "No network card named for this system, so no count." if record.get("nic") == "" else
                     "Unknown: the catalogue names no network card for this system.")
    if kind == "accelerators" and field in GENERATIONAL:
        blank = _generational(catalogue, record, field)
        if blank is not None:
            return blank
    return Blank(UNKNOWN, f"Unknown: no {label} figure in the documents read.")


def _generational(catalogue, record: dict, field: str) -> Blank | None:
    arch = record.get("architecture")
    # the other 16-bit format stands in for "its 16-bit rates" when the blank is itself 16-bit (BF16 on
    # Volta, FP16 on a TPU)
    if not arch or not any(record.get(f) is not None for f in SIXTEEN_BIT if f != field):
        return None
    same = [a for a in catalogue.items("accelerators")
            if a.get("architecture") == arch and a.get("vendor") == record.get("vendor")]
    if any(a.get(field) is not None for a in same):
        return None
    name = GENERATIONAL[field]
    vendor = f"{record['vendor']} " if record.get("vendor") else ""
    published = "its other 16-bit rate is" if field in SIXTEEN_BIT else "its 16-bit rates are"
    article = "an" if name[0] in "F" else "a"
    return Blank(NOT_APPLICABLE, f"Not applicable: no {vendor}{arch} device in the catalogue has {article} {name} rate "
                                 f"({published} published).")


__all__ = ["Blank", "NOT_APPLICABLE", "NOT_PUBLISHED", "UNKNOWN", "why_blank"]
