"""Print measured against estimated for every published measurement, and the median absolute
error per category:  python tests/validation/report.py"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    os.environ.setdefault("GPUDESK_HOME", tempfile.mkdtemp(prefix="gpudesk-validation-"))
    from gpudesk.core.catalogue import Catalogue
    from tests.validation.cases import median_errors, run_all

    catalogue = Catalogue.open(None, ROOT / "data")
    outcomes = run_all(catalogue)
    print(f"{'measurement':46} {'metric':28} {'measured':>12} {'low':>11} {'likely':>11} {'high':>11} {'error':>8}  in")
    for o in outcomes:
        if o.skipped:
            print(f"{o.id[:46]:46} {o.metric[:28]:28} {o.measured:12.4g}  skipped: {o.skipped[:90]}")
            continue
        e = o.estimated
        print(f"{o.id[:46]:46} {o.metric[:28]:28} {o.measured:12.4g} {e.low:11.4g} {e.likely:11.4g} {e.high:11.4g} "
              f"{o.error:+8.1%}  {'yes' if o.inside else 'NO'}")
    checked = [o for o in outcomes if not o.skipped]
    inside = sum(o.inside for o in checked)
    print(f"\n{len(checked)} measurements checked, {inside} inside the low-high range, "
          f"{len(outcomes) - len(checked)} skipped (reason printed)")
    print("median absolute error of the likely estimate, per category:")
    for category, error in median_errors(checked).items():
        count = sum(1 for o in checked if o.category == category)
        print(f"  {category:24} {error:6.1%}  ({count} measurements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
