"""Prices a buyer acts on: when a price is too old to trust without checking, and the cost-of-
ownership factors (host, network, facility) taken from the catalogue's `cost_factors`, the user's
Preferences and the scenario, in that order of precedence from last to first. No Qt."""

from __future__ import annotations

import datetime as _dt

from gpudesk.core.estimate.tco import COMPONENTS, Factor, TcoFactors

STALE_MONTHS = 12
# scenario and Preferences fields that replace a catalogue factor (same names as the components)
TCO_FIELDS = COMPONENTS


def _month_index(date: str) -> int | None:
    try:
        parts = [int(x) for x in str(date).split("-")[:2]]
    except ValueError:
        return None
    if not parts or not 1900 <= parts[0] <= 9999:
        return None
    month = parts[1] if len(parts) > 1 else 12  # a year alone: its last month, the kindest reading
    return parts[0] * 12 + month - 1


def is_stale(date: str | None, as_of: str | None = None, today: _dt.date | None = None) -> bool:
    """Whether a price dated `date` is more than STALE_MONTHS months older than `as_of` (a replay
    date) or today. An undated price is stale: nobody can say how old it is."""
    if not date:
        return True
    then = _month_index(date)
    ref = _month_index(as_of) if as_of else None
    if ref is None:
        t = today or _dt.date.today()
        ref = t.year * 12 + t.month - 1
    return then is None or ref - then > STALE_MONTHS


def catalogue_factors(catalogue, as_of: str | None = None) -> dict[str, Factor]:
    """The newest catalogue observation of each cost factor known on `as_of`; the user's own rows
    come before the bundled ones."""
    from gpudesk.core.catalogue.reading import USER_ORIGINS, known_by, neg_date  # the catalogue package is heavy

    rows = [r for r in catalogue.items("cost_factors") if r.get("value") is not None
            and known_by(r.get("date"), as_of)]
    rows.sort(key=lambda r: (r.get("origin") not in USER_ORIGINS, neg_date(str(r.get("date") or ""))))
    sources = catalogue.sources()
    out: dict[str, Factor] = {}
    for r in rows:
        if r["component"] in out:
            continue
        title = (sources.get(r.get("source") or "") or {}).get("title") or r.get("source") or "no source"
        out[r["component"]] = Factor(float(r["value"]), f"{title}, {r.get('date') or 'undated'}", r["id"])
    return out


def resolve_tco(finance: dict, catalogue, settings=None) -> TcoFactors:
    """The factors an estimate uses: the scenario's finance fields, else Preferences, else the catalogue."""
    found = catalogue_factors(catalogue, finance.get("as_of")) if catalogue is not None else {}
    own = (getattr(settings, "tco", None) or {}) if settings is not None else {}
    for name in TCO_FIELDS:
        if own.get(name) is not None:
            found[name] = Factor(float(own[name]), "your Preferences")
        if finance.get(name) is not None:
            found[name] = Factor(float(finance[name]), "given in the scenario")
    include = finance.get("facility")
    if include is None and settings is not None:
        include = (getattr(settings, "tco", None) or {}).get("facility")
    return TcoFactors(tuple((n, found[n]) for n in COMPONENTS if n in found),
                      include_facility=True if include is None else bool(include))


def capex_parts_text(cost) -> str:
    """'hardware $250,000 · hosts $32,010 · facility $98,280': the capex's parts that are not zero."""
    from gpudesk.core.format import usd

    parts = cost.capex_parts or {}
    return " · ".join(f"{name} {usd(value)}" for name, value in parts.items() if value)


def commitments_text(cost) -> str:
    """Break-even in months against each cloud price the rented alternative has, in words."""
    from gpudesk.core.estimate.cost import PRICING_WORDS

    out = []
    for pricing, words in PRICING_WORDS.items():
        found = cost.break_even_by_pricing.get(pricing)
        if found is None:
            continue
        runs, months = found
        out.append(f"{words}: " + ("never" if runs is None else f"{months:,.1f} months" if months is not None
                                   else f"{runs:,.0f} runs"))
    return "; ".join(out)
