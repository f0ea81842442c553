"""Print measured against estimated for every published measurement, then the summary the issue
asks for: median absolute error per device class, per regime and per family (training,
inference), for the fit half and the held-out half; the worst ten; the share inside the low–high
range; and the median width (high / low) of the ranges.

    python tests/validation/report.py [--only-summary]
    python -m tests.validation.report --leave-one-source-out   (the figures that count: each source
        family judged with the engine's constants fitted without it; --fit also prints the constants
        fitted on everything, which constants.py must hold)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _line(o) -> str:
    if o.skipped:
        return f"{o.id[:52]:52} {o.metric[:26]:26} {o.measured:11.4g}  skipped: {o.skipped[:100]}"
    e = o.estimated
    return (f"{o.id[:52]:52} {o.metric[:26]:26} {o.measured:11.4g} {e.low:11.4g} {e.likely:11.4g} {e.high:11.4g} "
            f"{o.error:+8.1%} {'yes' if o.inside else 'NO ':3} {o.split[:4]:4} {o.device_class[:16]:16} {o.regime}")


def _table(title: str, groups: dict[str, list]) -> None:
    print(f"\n{title}")
    print(f"  {'':28} {'n':>4} {'median |err|':>13} {'fit':>8} {'holdout':>8} {'inside':>7} {'width':>6}")
    for key, items in sorted(groups.items()):
        errs = [abs(o.error) for o in items]
        fit = [abs(o.error) for o in items if o.split == "fit"]
        hold = [abs(o.error) for o in items if o.split == "holdout"]
        inside = sum(o.inside for o in items) / len(items)
        width = statistics.median([o.width for o in items if o.width])
        fmt = lambda v: f"{statistics.median(v):8.1%}" if v else f"{'—':>8}"  # noqa: E731
        print(f"  {key:28} {len(items):4} {statistics.median(errs):13.1%} {fmt(fit)} {fmt(hold)} {inside:7.0%} "
              f"{width:6.2f}")


def summary(outcomes) -> dict:
    from tests.validation.cases import family

    checked = [o for o in outcomes if not o.skipped]
    out = {"checked": len(checked), "skipped": len(outcomes) - len(checked),
           "inside": sum(o.inside for o in checked) / max(1, len(checked)),
           "median_width": statistics.median([o.width for o in checked if o.width]) if checked else None,
           "worst_ratio": max((max(o.ratio, 1 / o.ratio) for o in checked if o.ratio), default=None)}
    for fam in ("training", "inference", "energy"):
        for split in ("fit", "holdout", "all"):
            errs = [abs(o.error) for o in checked if family(o) == fam and (split == "all" or o.split == split)]
            out[f"{fam}_{split}"] = statistics.median(errs) if errs else None
    return out


def leave_one_source_out(outcomes, show_fit: bool) -> None:
    from gpudesk.core.estimate import constants as C
    from tests.validation.loso import fitted, judge, summary

    judged = judge(outcomes)
    s = summary(judged)
    print("\nleave one source family out: each family judged with the fitted scales refitted without it")
    print(f"  {'source family':44} {'n':>4} {'median |err|':>13} {'inside':>7} {'width':>6}")
    for fam, v in s["families"].items():
        print(f"  {fam[:44]:44} {v['n']:4} {v['median']:13.1%} {v['inside']:7.0%} {v['width']:6.2f}")
    for kind in ("training", "inference"):
        med = s[f"{kind}_median"]
        print(f"  {kind:10} median |error| left out: {med:.1%} over {s[kind + '_n']} measurements"
              if med is not None else f"  {kind:10} no measurements")
    print(f"  worst family median {s['worst_family_median']:.1%}; {len(s['beyond_2x'])} case(s) more than 2x off; "
          f"{s['inside']:.0%} inside low-high; median width high/low {s['median_width']:.2f}")
    for j in sorted(s["beyond_2x"], key=lambda j: -abs(__import__("math").log(j.ratio)))[:15]:
        print(f"    {j.ratio:6.2f}x  {j.outcome.id} ({j.outcome.source_family})")
    if show_fit:
        checked = [o for o in outcomes if not o.skipped and o.estimated is not None and o.ratio]
        factor = fitted(checked)
        scales = {k: round(C.FITTED_SCALE[k] * factor[k], 3) for k in factor}
        print(f"\nfitted on every measurement: FITTED_SCALE = {scales}")
        print(f"left-out 85th percentile of |ln(estimated / measured)|: MODEL_ERROR = "
              f"{{'training': {s['training_p85_log']:.2f}, 'inference': {s['inference_p85_log']:.2f}}}")


def main() -> int:
    os.environ.setdefault("GPUDESK_HOME", tempfile.mkdtemp(prefix="gpudesk-validation-"))
    from gpudesk.core.catalogue import Catalogue
    from tests.validation.cases import family, run_all

    catalogue = Catalogue.open(None, ROOT / "data")
    outcomes = run_all(catalogue)
    checked = [o for o in outcomes if not o.skipped]
    if "--leave-one-source-out" in sys.argv or "--fit" in sys.argv:
        leave_one_source_out(outcomes, "--fit" in sys.argv)
        return 0
    if "--only-summary" not in sys.argv:
        print(f"{'measurement':52} {'metric':26} {'measured':>11} {'low':>11} {'likely':>11} {'high':>11} "
              f"{'error':>8} in  half class            regime")
        for o in outcomes:
            print(_line(o))
    by = lambda attr: {k: [o for o in checked if getattr(o, attr) == k] for k in {getattr(o, attr) for o in checked}}  # noqa: E731
    _table("per device class", by("device_class"))
    _table("per regime", by("regime"))
    _table("per family", {k: [o for o in checked if family(o) == k] for k in {family(o) for o in checked}})
    print("\nworst ten (estimated / measured):")
    for o in sorted(checked, key=lambda o: -abs(__import__("math").log(o.ratio)))[:10]:
        print(f"  {o.ratio:6.2f}×  {o.id} ({o.device_class}, {o.regime})")
    s = summary(outcomes)
    print(f"\n{s['checked']} measurements checked ({s['skipped']} skipped, reasons above); "
          f"{s['inside']:.0%} inside the low–high range; median range width high/low {s['median_width']:.2f}; "
          f"worst estimate {s['worst_ratio']:.2f}× off")
    for fam in ("training", "inference", "energy"):
        fmt = lambda v: f"{v:.1%}" if v is not None else "—"  # noqa: E731
        print(f"  {fam:10} median |error|: fit {fmt(s[fam + '_fit'])}, held out {fmt(s[fam + '_holdout'])}, "
              f"all {fmt(s[fam + '_all'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
