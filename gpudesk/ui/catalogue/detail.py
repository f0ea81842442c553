"""The catalogue's detail panel: every figure of one entry with its source (a link) and date."""

from __future__ import annotations

from html import escape

from gpudesk.core.catalogue.blanks import NOT_APPLICABLE, NOT_PUBLISHED, why_blank
from gpudesk.core.catalogue.fields import KIND_NOUNS, KINDS, PRICE_KIND_WORDS
from gpudesk.core.catalogue.reading import provenance
from gpudesk.ui import theme
from gpudesk.ui.models.table import format_value

# The figures a buyer looks for: the detail says why each is blank, when it is.
BLANK_SHOWN = {
    "accelerators": ("memory_gb", "mem_bandwidth_gbs", "tdp_w", "bf16_tflops", "fp16_tflops", "fp8_tflops", "fp4_tflops"),
    "systems": ("accelerator_count", "system_memory_gb", "system_power_w", "intra_link", "nic"),
}

ORIGIN_TEXT = {
    "bundled": "",
    "user_added": "Your entry",
    "user_edited": "Edited by you (kept when the catalogue updates)",
}
TEAM_ORIGIN_TEXT = {  # a row someone else added or edited (a shared team catalogue)
    "user_added": "Team entry",
    "user_edited": "Edited by the team (kept when the catalogue updates)",
}


def _css() -> str:
    """The detail pane's style, in the current theme's colours."""
    c = theme.colours()
    return f"""
<style>
 body {{ font-family: sans-serif; }}
 h2 {{ margin: 0 0 2px 0; font-size: 15pt; }}
 .sub {{ color: {c['muted']}; margin-bottom: 8px; }}
 .badge {{ background: {c['badge_fill']}; color: {c['badge_ink']}; padding: 2px 6px; }}
 table.f {{ border-collapse: collapse; width: 100%; }}
 table.f td {{ padding: 3px 6px 3px 0; vertical-align: top; border-bottom: 1px solid {c['rule_soft']}; }}
 td.l {{ color: {c['muted']}; white-space: nowrap; }}
 td.v {{ font-weight: 600; }}
 td.s {{ color: {c['muted']}; font-size: 8.5pt; white-space: nowrap; }}
 td.lw {{ color: {c['muted']}; }}
 td.vn {{ font-weight: 600; white-space: nowrap; }}
 .derived {{ color: {c['muted']}; font-weight: normal; font-size: 8.5pt; white-space: normal; }}
 .notes {{ color: {c['ink_soft']}; margin-top: 10px; }}
 .blank {{ color: {c['faint']}; font-weight: normal; }}
 .pnote {{ color: {c['muted']}; font-weight: normal; font-size: 8.5pt; }}
 h3 {{ font-size: 10.5pt; margin: 14px 0 4px 0; }}
 ol {{ margin-top: 2px; padding-left: 18px; }}
 li {{ margin-bottom: 3px; }}
</style>
"""


def detail_html(catalogue, kind: str, record: dict | None) -> str:
    if record is None:
        return _css() + "<p class='sub'>Select an entry to see its figures and where each came from.</p>"
    title = record.get("name") or record.get("title") or record.get("instance_type") or record["id"]
    subtitle = _subtitle(kind, record)
    parts = [_css(), f"<h2>{escape(str(title))}</h2>"]
    if subtitle:
        parts.append(f"<div class='sub'>{escape(subtitle)}</div>")
    origin = ORIGIN_TEXT.get(record.get("origin", "bundled"), "")
    me, last = getattr(catalogue, "user", None), record.get("updated_by") or record.get("added_by")
    if me and last and last != me:
        origin = TEAM_ORIGIN_TEXT.get(record.get("origin", "bundled"), origin)
    who = provenance(record)
    if origin:
        parts.append(f"<p><span class='badge'>{escape(origin)}</span>"
                     + (f" <span class='pnote'>{escape(who)}</span>" if who else "") + "</p>")
    elif who:
        parts.append(f"<p class='pnote'>{escape(who)}</p>")

    numbered: dict[str, int] = {}  # source id -> its number in the list below the table
    sources: list[dict] = []
    rows = [row for spec in KINDS[kind] if (row := _figure_row(catalogue, kind, record, spec, numbered, sources))]
    parts.append("<table class='f'>" + "".join(rows) + "</table>")

    if kind in ("accelerators", "systems"):
        parts.extend(_related(catalogue, kind, record))
    if record.get("notes"):
        parts.append(f"<div class='notes'><b>Notes.</b> {escape(str(record['notes']))}</div>")
    if sources:
        parts.append(_sources_html(sources))
    return "".join(parts)


def _figure_row(catalogue, kind: str, record: dict, spec, numbered: dict, sources: list) -> str:
    """The table row of one field ("" when it is not shown), numbering the sources it cites."""
    value = record.get(spec.name)
    if (value is None or value == "") and spec.name in BLANK_SHOWN.get(kind, ()):
        blank = why_blank(catalogue, kind, record, spec.name, spec.label)
        if blank is None:
            return ""
        word = {NOT_APPLICABLE: "n/a", NOT_PUBLISHED: "not published"}.get(blank.reason, "unknown")
        return (f"<tr><td class='l'>{escape(spec.label)}</td><td class='v'><span class='blank'>{word}</span>"
                f"<div class='derived'>{escape(blank.text)}</div></td><td class='s'></td></tr>")
    if value is None or value == "" or spec.name in ("notes",):
        return ""
    if spec.type == "ref" and spec.name in ("source", "grid_source", "electricity_source"):
        return ""
    text = format_value(value, field=spec.name)
    if spec.unit and spec.unit != "slug":
        text = f"{text} {spec.unit}"
    if spec.name == "url":
        text = f"<a href='{escape(str(value), quote=True)}'>{escape(str(value))}</a>"
    else:
        text = escape(text)
    src_cell = ""
    if spec.figure:
        text, src_cell = _cite(catalogue.figure_source(kind, record, spec.name), text, numbered, sources)
    return f"<tr><td class='l'>{escape(spec.label)}</td><td class='v'>{text}</td><td class='s'>{src_cell}</td></tr>"


def _cite(src: dict | None, text: str, numbered: dict, sources: list) -> tuple[str, str]:
    """The value's text and its source cell: a numbered source and its date, or a derived figure's
    formula and the numbers of its inputs' sources."""
    if src and src.get("derived"):
        d = src["derived"]
        refs = []
        for inp in d["input_sources"]:
            if inp["id"] not in numbered:
                numbered[inp["id"]] = len(numbered) + 1
                sources.append(inp)
            refs.append(numbered[inp["id"]])
        marks = "".join(f"[{n}]" for n in sorted(set(refs)))
        return text + f"<div class='derived'>{escape(d['formula'])}</div>", f"derived<br>{marks}"
    if src:
        if src["id"] not in numbered:
            numbered[src["id"]] = len(numbered) + 1
            sources.append(src)
        return text, f"[{numbered[src['id']]}] {escape(src.get('date') or 'undated')}"
    return text, ""


def _sources_html(sources: list[dict]) -> str:
    items = []
    for src in sources:
        label = escape(src["title"])
        publisher = escape(src.get("publisher") or "")
        link = f"<a href='{escape(src['url'], quote=True)}'>{label}</a>" if src.get("url") else label
        meta = ", ".join(x for x in (publisher, escape(src.get("date") or "")) if x)
        items.append(f"<li>{link}{' — ' + meta if meta else ''}</li>")
    return "<h3>Sources</h3><ol>" + "".join(items) + "</ol>"


def _subtitle(kind: str, record: dict) -> str:
    if kind == "accelerators":
        bits = [record.get("vendor"), record.get("architecture"), str(record.get("year") or ""), record.get("form_factor")]
    elif kind == "systems":
        bits = [record.get("vendor"), f"{record.get('accelerator_count') or '?'} × {record.get('accelerator')}"]
    elif kind == "cloud":
        bits = [record.get("provider"), record.get("region"), f"{record.get('accelerator_count') or '?'} × {record.get('accelerator')}"]
    elif kind == "prices":
        bits = [f"{record.get('kind')} price of {record.get('item')}"]
    elif kind == "regions":
        bits = [record.get("country")]
    elif kind == "interconnects":
        bits = [record.get("family"), record.get("generation")]
    else:
        bits = [record.get("publisher"), record.get("kind")]
    return " · ".join(b for b in bits if b) + f"   ({KIND_NOUNS[kind]} {record['id']})"


def _related(catalogue, kind: str, record: dict) -> list[str]:
    out = []
    prices = [p for p in catalogue.items("prices") if p["item"] == record["id"]]
    if prices:
        # each price says what exactly it prices (a kit, a module in volume, a launch price) and
        # which one a comparison uses
        used = catalogue.latest_price(record["id"])
        out.append("<h3>Prices</h3><table class='f'>")
        sources = catalogue.sources()
        for p in sorted(prices, key=lambda p: p.get("date") or "", reverse=True):
            src = sources.get(p.get("source") or "") or {}
            title = escape(src.get("title") or "")
            link = (f"<a href='{escape(src['url'], quote=True)}'>{title}</a>" if src.get("url") and title else title)
            mark = " <b>· used by comparisons</b>" if used is not None and p.get("id") == used.get("id") else ""
            note = escape(p.get("notes") or "")
            out.append(
                f"<tr><td class='l'>{escape(PRICE_KIND_WORDS.get(p['kind'], p['kind']))}</td>"
                f"<td class='v'>${p['usd']:,.0f}{mark}<div class='pnote'>{note}"
                f"{'<br>' if note and link else ''}{link}</div></td>"
                f"<td class='s'>{escape(p.get('date') or '')}</td></tr>"
            )
        out.append("</table>")
    if kind == "accelerators":
        offers = [c for c in catalogue.items("cloud") if c["accelerator"] == record["id"]]
        if offers:
            out.append("<h3>Cloud offerings</h3><table class='f'>")
            for c in sorted(offers, key=lambda c: c["usd_per_hour"] / max(1, c.get("accelerator_count") or 1)):
                per_gpu = c["usd_per_hour"] / max(1, c.get("accelerator_count") or 1)
                # the instance name wraps (after its underscores, dots and hyphens) so the price beside it
                # stays whole in a narrow panel
                name = escape(c["instance_type"])
                for mark in ("_", ".", "-"):
                    name = name.replace(mark, mark + "\u200b")
                # offers of one instance differ by region: each says its own
                region = f"<div class='pnote'>{escape(c['region'])}</div>" if c.get("region") else ""
                out.append(
                    f"<tr><td class='lw'>{escape(c['provider'])} {name}{region}</td>"
                    f"<td class='vn'>${per_gpu:,.2f}/GPU-h</td><td class='s'>{escape(c.get('date') or '')}</td></tr>"
                )
            out.append("</table>")
    return out
