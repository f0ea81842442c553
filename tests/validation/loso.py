"""Leave-one-source-out validation: the engine's fitted constants (constants.FITTED_SCALE) refitted
without each source family, and that family judged with them.

The engine multiplies what its physics gives by one fitted scale per kind (training, inference), so
refitting it without a family is exact arithmetic on one run of the engine: for a family F, the
scale fitted on everything else is the shipped scale times exp(−median ln(estimated / measured))
over the other families' measurements of the same kind, and F's estimates move by that factor
(times by its inverse). The kernel curves are fitted to operator tables, never to these
measurements, so nothing else has seen the left-out family.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .cases import Outcome, family

TIMES = ("time_s", "ttft_s", "tpot_s")  # estimated times shrink as a speed scale grows


def direction(o: Outcome) -> float:
    return -1.0 if o.metric in TIMES else 1.0


def log_ratio(o: Outcome) -> float:
    """ln(estimated / measured) of the likely estimate, on the speed side (times inverted)."""
    return direction(o) * math.log(o.ratio)


def fitted(outcomes: list[Outcome]) -> dict[str, float]:
    """The factor the shipped scales would be multiplied by if fitted on `outcomes`: exp(−median
    speed-side log ratio) per kind; 1.0 for a kind with no measurement."""
    out = {}
    for kind in ("training", "inference"):
        logs = [log_ratio(o) for o in outcomes if family(o) == kind]
        out[kind] = math.exp(-statistics.median(logs)) if logs else 1.0
    return out


@dataclass
class Judged:
    outcome: Outcome
    ratio: float  # estimated / measured with the scale fitted without this outcome's family
    inside: bool
    width: float


def judge(outcomes: list[Outcome]) -> list[Judged]:
    """Every checked training or inference outcome, judged with the scale fitted without its family."""
    rows = [o for o in outcomes if not o.skipped and o.estimated is not None and o.ratio
            and family(o) in ("training", "inference")]
    families = sorted({o.source_family for o in rows})
    out = []
    for fam in families:
        factor = fitted([o for o in rows if o.source_family != fam])
        for o in rows:
            if o.source_family != fam:
                continue
            move = factor[family(o)] ** direction(o)
            e = o.estimated
            lo, hi = e.low * move, e.high * move
            out.append(Judged(o, o.ratio * move, lo * (1 - 1e-9) <= o.measured <= hi * (1 + 1e-9),
                              hi / lo if lo > 0 else math.inf))
    return out


def p85(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.85 * len(ordered)))] if ordered else 0.0


def summary(judged: list[Judged]) -> dict:
    """The figures the engine issue's done-when names, on the left-out estimates."""
    out: dict = {}
    for kind in ("training", "inference"):
        errs = [abs(j.ratio - 1.0) for j in judged if family(j.outcome) == kind]
        out[f"{kind}_median"] = statistics.median(errs) if errs else None
        out[f"{kind}_n"] = len(errs)
        out[f"{kind}_p85_log"] = p85([abs(math.log(j.ratio)) for j in judged if family(j.outcome) == kind])
    by_family: dict[str, list[Judged]] = {}
    for j in judged:
        by_family.setdefault(j.outcome.source_family, []).append(j)
    out["families"] = {f: {"n": len(js), "median": statistics.median(abs(j.ratio - 1) for j in js),
                           "inside": sum(j.inside for j in js) / len(js),
                           "width": statistics.median(j.width for j in js)} for f, js in sorted(by_family.items())}
    out["worst_family_median"] = max((v["median"] for v in out["families"].values()), default=None)
    out["beyond_2x"] = [j for j in judged if not 0.5 <= j.ratio <= 2.0]
    out["inside"] = sum(j.inside for j in judged) / max(1, len(judged))
    out["median_width"] = statistics.median(j.width for j in judged) if judged else None
    out["n"] = len(judged)
    return out
