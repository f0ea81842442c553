"""The app's colours and the few sizes its style sheet uses, by what they mean.

Every colour the views draw with is named here once ("winner_fill", "muted", "error", ...) and
comes in three variants:

* ``light`` -- the look gpudesk always had (the same colours as before this module existed);
* ``dark`` -- for a dark desktop: the same meanings, lighter inks on dark fills;
* ``print`` -- fixed, for the PDF renderer, which prints on white paper whatever the screen shows.

The screen variant is chosen from the application palette (its Window colour's lightness), so a
view follows whatever palette the QApplication has when it draws. Text colours are then checked
against the palette's own Base and Window colours and, where the palette is not the one gpudesk
sets itself, moved towards the palette's text colour until they reach a contrast ratio of 4.5 (the
WCAG AA level for body text), so a desktop's own dark or light palette keeps them readable.

``GPUDESK_THEME=light|dark|system`` (read by :func:`preferred_mode`) picks the palette
``gpudesk.ui.app`` installs; ``system`` (the default) follows the desktop and is light when the
desktop states no preference.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette

LIGHT = "light"
DARK = "dark"
PRINT = "print"
MODES = ("light", "dark", "system")

# Text contrast the screen variants aim for (WCAG 2.x AA, normal text).
MIN_CONTRAST = 4.5

_SHARED_LIGHT = {
    # palette roles
    "window": "#f4f5f7",
    "base": "#ffffff",
    "alt_base": "#f6f8fb",
    "button": "#fbfbfc",
    "ink": "#1d2330",            # body text
    "on_accent": "#ffffff",      # text on the accent / highlight fill
    "accent": "#2f6fde",         # highlight and selection fill, the cover rule
    "accent_ink": "#2f6fde",     # accent as text: links, "question", "changed"
    "disabled": "#a0a6b0",
    # text by meaning
    "ink_soft": "#3b4352",       # notes, chart captions
    "header_ink": "#2b3342",     # table header text
    "muted": "#5b6475",          # secondary text: hints, captions, sources
    "dimmed": "#6b7280",         # rows left out of a calculation
    "faint": "#666e80",          # absent values, placeholders, missing files (4.5:1 on every light ground)
    "error": "#b3261e",
    "warning": "#9a6700",
    "caution": "#8a5a00",        # something you changed / left unlinked
    "problem": "#c62828",        # physically impossible, does not fit
    "success": "#19794f",        # imported, added
    "winner_ink": "#0b6b3a",
    "winner_fill": "#dff3e7",
    "user_entry": "#1a5fb4",     # catalogue rows you added
    "badge_ink": "#7a5200",
    "badge_fill": "#fff4d6",
    # fills and lines
    "section_fill": "#eef1f5",
    "header_fill": "#eef1f5",
    "header_border": "#dde1e7",
    "header_rule": "#d3d8df",
    "gridline": "#e3e6eb",
    "rule_soft": "#eef0f3",
    "border": "#dde1e7",
    # navigation sidebar (dark in both variants)
    "nav_fill": "#1f2633",
    "nav_ink": "#d7dce6",
    "nav_hover": "#2a3344",
    "nav_selected": "#2d3a52",
    "nav_title": "#ffffff",
    "nav_subtitle": "#8a93a3",
    # charts (pyqtgraph and the PDF's vector charts)
    "chart_fill": "#ffffff",
    "chart_ink": "#1d2330",
    "chart_text": "#3b4352",
    "chart_muted": "#5b6475",
    "chart_guide": "#8a93a3",    # dashed guide lines
    "chart_whisker": "#9aa3b2",  # error bars, before-calibration marks, axes
    "chart_grid": "#e3e6eb",
    "marker_edge": "#ffffff",    # outline that separates markers from each other
    "price_quote": "#1a7f37",
    "price_deal": "#8250df",
    # the cluster canvas
    "canvas_fill": "#f7f8fa",
    "canvas_grid": "#d9dde3",
    "node_fill": "#ffffff",
    "switch_fill": "#f3f4f6",
    "node_border": "#c9cfd8",
    "node_ink": "#1d2330",
    "node_muted": "#5b6475",
    "node_selected": "#1d2330",  # border of a selected node
    "kind_system": "#2f6fde",    # a node's stripe, badge and port by its kind
    "kind_accelerator": "#945ecf",
    "kind_cloud": "#13a4b4",
    "kind_switch": "#6b7280",
    "link_nvlink": "#19a979",    # links by interconnect family
    "link_infiniband": "#2f6fde",
    "link_ethernet": "#e8743b",
    "link_pcie": "#6b7280",
    "link_other": "#6b7280",
}

_SERIES_LIGHT = ("#2f6fde", "#e8743b", "#19a979", "#945ecf", "#ed4a7b", "#13a4b4", "#525df4", "#bf399e")

_DARK = {
    "window": "#1f232b",
    "base": "#171a20",
    "alt_base": "#1c2027",
    "button": "#2a2f38",
    "ink": "#e3e7ee",
    "on_accent": "#ffffff",
    "accent": "#3567c4",
    "accent_ink": "#7aa7f5",
    "disabled": "#6b7280",
    "ink_soft": "#c9cfd9",
    "header_ink": "#d6dbe4",
    "muted": "#a3acba",
    "dimmed": "#a0a7b3",
    "faint": "#99a2b0",
    "error": "#ff8a80",
    "warning": "#e3b341",
    "caution": "#e0a85a",
    "problem": "#ff7b72",
    "success": "#56d39a",
    "winner_ink": "#8be0ae",
    "winner_fill": "#1c3a2a",
    "user_entry": "#8ab4ff",
    "badge_ink": "#f0c674",
    "badge_fill": "#3b3020",
    "section_fill": "#2a303b",
    "header_fill": "#2a303b",
    "header_border": "#373d49",
    "header_rule": "#424a58",
    "gridline": "#323845",
    "rule_soft": "#2b303a",
    "border": "#373d49",
    "nav_fill": "#13161c",
    "nav_ink": "#d7dce6",
    "nav_hover": "#222836",
    "nav_selected": "#2d3a52",
    "nav_title": "#ffffff",
    "nav_subtitle": "#97a0ae",
    "chart_fill": "#171a20",
    "chart_ink": "#e3e7ee",
    "chart_text": "#c9cfd9",
    "chart_muted": "#a3acba",
    "chart_guide": "#7d8696",
    "chart_whisker": "#6f7888",
    "chart_grid": "#323845",
    "marker_edge": "#171a20",
    "price_quote": "#4cc06a",
    "price_deal": "#b08cf0",
    "canvas_fill": "#1b1f26",
    "canvas_grid": "#2f3541",
    "node_fill": "#262b34",
    "switch_fill": "#2e333d",
    "node_border": "#4a5261",
    "node_ink": "#e3e7ee",
    "node_muted": "#a3acba",
    "node_selected": "#e3e7ee",
    "kind_system": "#5b93f0",
    "kind_accelerator": "#a97ee0",
    "kind_cloud": "#2bbccc",
    "kind_switch": "#8a93a3",
    "link_nvlink": "#2fc28e",
    "link_infiniband": "#5b93f0",
    "link_ethernet": "#f08a55",
    "link_pcie": "#8a93a3",
    "link_other": "#8a93a3",
}

_SERIES_DARK = ("#5b93f0", "#f08a55", "#2fc28e", "#a97ee0", "#f06b93", "#2bbccc", "#7a83f7", "#d35cb5")

# The PDF's own colours: the light ones plus the cover band and table shading.
_PRINT = dict(_SHARED_LIGHT, **{
    "paper": "#ffffff",
    "band_fill": "#1f2633",      # cover band and table heading fill
    "band_ink": "#ffffff",
    "band_subtitle": "#c9d1de",
    "row_alt": "#fafbfc",
    "callout_fill": "#f2f6fd",
    "rule": "#d3d8df",
})

VARIANTS: dict[str, dict[str, str]] = {LIGHT: _SHARED_LIGHT, DARK: _DARK, PRINT: _PRINT}
SERIES: dict[str, tuple[str, ...]] = {LIGHT: _SERIES_LIGHT, DARK: _SERIES_DARK, PRINT: _SERIES_LIGHT}

# Colours used for text on the palette's Base/Window: these are the ones kept readable.
TEXT_ON_PAGE = ("ink", "ink_soft", "header_ink", "muted", "dimmed", "faint", "error", "warning", "caution",
                "problem", "success", "user_entry", "accent_ink")
# Text drawn on a fill of its own: (ink, fill).
TEXT_ON_FILL = (("winner_ink", "winner_fill"), ("badge_ink", "badge_fill"), ("header_ink", "header_fill"),
                ("ink", "section_fill"), ("nav_ink", "nav_fill"), ("nav_title", "nav_fill"),
                ("nav_subtitle", "nav_fill"), ("nav_title", "nav_selected"), ("on_accent", "accent"),
                ("chart_ink", "chart_fill"), ("chart_text", "chart_fill"), ("chart_muted", "chart_fill"),
                ("node_ink", "node_fill"), ("node_muted", "node_fill"))
# No text colour of either variant reads under 4.5:1 on the grounds it is drawn on ("faint" was
# #8a93a3, 3.2:1 on white, until 2026-11-25).
LIGHT_EXCEPTIONS: frozenset[str] = frozenset()

# The few font sizes the style sheet sets (points).
SIZES = {"base_min": 9.5, "nav": 10.5, "nav_title": 13.0, "nav_subtitle": 8.5, "page_title": 14.0, "small": 8.5}
PRINT_FONT = "DejaVu Sans"


# --- contrast ---------------------------------------------------------------------------------


def luminance(colour: QColor) -> float:
    """Relative luminance (WCAG 2.x) of an sRGB colour."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast(a: QColor | str, b: QColor | str) -> float:
    """WCAG contrast ratio of two colours, 1 to 21."""
    la, lb = luminance(QColor(a)), luminance(QColor(b))
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def _legible(fg: QColor, backgrounds: list[QColor], towards: QColor, target: float = MIN_CONTRAST) -> QColor:
    """fg, moved step by step towards `towards` (the palette's text colour) until it reaches
    `target` against every background; fg itself when it already does."""
    if all(contrast(fg, bg) >= target for bg in backgrounds):
        return fg
    for step in range(1, 21):
        t = step / 20
        mixed = QColor.fromRgbF(fg.redF() + (towards.redF() - fg.redF()) * t,
                                fg.greenF() + (towards.greenF() - fg.greenF()) * t,
                                fg.blueF() + (towards.blueF() - fg.blueF()) * t)
        if all(contrast(mixed, bg) >= target for bg in backgrounds):
            return mixed
    return QColor(towards)


# --- choosing the variant -----------------------------------------------------------------------


def _app_palette() -> QPalette | None:
    app = QGuiApplication.instance()
    return app.palette() if app is not None else None  # type: ignore[union-attr]


def is_dark(palette: QPalette | None) -> bool:
    return palette is not None and palette.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def variant(palette: QPalette | None = None) -> str:
    """"dark" or "light": which screen variant suits `palette` (the application's by default)."""
    return DARK if is_dark(palette if palette is not None else _app_palette()) else LIGHT


_cache: dict[tuple, dict[str, str]] = {}


def _palette_key(palette: QPalette) -> tuple:
    return tuple(palette.color(role).rgba() for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base,
                                                          QPalette.ColorRole.Text))


def variant_table(name: str) -> dict[str, str]:
    """The colours of one variant as designed (before any legibility adjustment), series included."""
    return dict(VARIANTS[name], **{f"series{i}": h for i, h in enumerate(SERIES[name])})


def colours(palette: QPalette | None = None) -> dict[str, str]:
    """Every screen colour by name, as '#rrggbb', for `palette` (the application's by default);
    the chart series are "series0" to "series7"."""
    pal = palette if palette is not None else _app_palette()
    if pal is None:
        return variant_table(LIGHT)
    key = _palette_key(pal)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    name = variant(pal)
    table = variant_table(name)
    backgrounds = [pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Window)]
    towards = pal.color(QPalette.ColorRole.Text)
    own = all(pal.color(role).name() == VARIANTS[name][token] for role, token in
              ((QPalette.ColorRole.Window, "window"), (QPalette.ColorRole.Base, "base")))
    for token in TEXT_ON_PAGE:
        if name == LIGHT and (own or token in LIGHT_EXCEPTIONS):
            continue  # gpudesk's own light palette: today's colours exactly
        table[token] = _legible(QColor(table[token]), backgrounds, towards).name()
    if len(_cache) > 16:
        _cache.clear()
    _cache[key] = table
    return table


def hex(name: str, palette: QPalette | None = None) -> str:  # noqa: A001 - the colour's hex form
    """A screen colour by name as '#rrggbb' (for style sheets, HTML and pyqtgraph)."""
    table = colours(palette)
    if name not in table:
        raise KeyError(f"theme has no colour named {name!r}")
    return table[name]


def colour(name: str, palette: QPalette | None = None) -> QColor:
    """A screen colour by name."""
    return QColor(hex(name, palette))


def series(i: int, palette: QPalette | None = None) -> QColor:
    """The i-th chart series colour (repeats after eight)."""
    seq = SERIES[variant(palette)]
    return QColor(seq[i % len(seq)])


def series_hex(palette: QPalette | None = None) -> list[str]:
    return list(SERIES[variant(palette)])


def print_colour(name: str) -> QColor:
    """A colour of the fixed print variant (the PDF, on white paper)."""
    if name not in _PRINT:
        raise KeyError(f"print theme has no colour named {name!r}")
    return QColor(_PRINT[name])


def print_series(i: int) -> QColor:
    return QColor(_SERIES_LIGHT[i % len(_SERIES_LIGHT)])


# --- Qt pieces ----------------------------------------------------------------------------------


def make_palette(name: str) -> QPalette:
    """The QPalette gpudesk installs for the light or dark variant."""
    c = VARIANTS[DARK if name == DARK else LIGHT]
    pal = QPalette()
    role = QPalette.ColorRole
    for r, token in ((role.Window, "window"), (role.WindowText, "ink"), (role.Base, "base"),
                     (role.AlternateBase, "alt_base"), (role.Text, "ink"), (role.Button, "button"),
                     (role.ButtonText, "ink"), (role.Highlight, "accent"), (role.HighlightedText, "on_accent"),
                     (role.ToolTipBase, "base"), (role.ToolTipText, "ink"), (role.Link, "accent_ink"),
                     (role.PlaceholderText, "faint"), (role.BrightText, "on_accent")):
        pal.setColor(r, QColor(c[token]))
    if name == DARK:
        for r, token in ((role.Light, "header_rule"), (role.Midlight, "border"), (role.Mid, "nav_hover"),
                         (role.Dark, "nav_fill"), (role.Shadow, "nav_fill"), (role.LinkVisited, "user_entry")):
            pal.setColor(r, QColor(c[token]))
    for r in (role.Text, role.ButtonText, role.WindowText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, QColor(c["disabled"]))
    return pal


def css(palette: QPalette | None = None) -> str:
    """The application style sheet."""
    c = colours(palette)
    s = SIZES
    return f"""
QListWidget#navigation {{
    background: {c['nav_fill']}; color: {c['nav_ink']}; border: none; outline: none; padding-top: 8px;
    font-size: {s['nav']}pt;
}}
QListWidget#navigation::item {{ padding: 10px 14px; border-left: 3px solid transparent; }}
QListWidget#navigation::item:hover {{ background: {c['nav_hover']}; }}
QListWidget#navigation::item:selected {{
    background: {c['nav_selected']}; color: {c['nav_title']}; border-left: 3px solid {c['accent']};
}}
QLabel#navTitle {{ background: {c['nav_fill']}; color: {c['nav_title']}; font-size: {s['nav_title']}pt; font-weight: 600;
    padding: 14px 16px 6px 16px; }}
QLabel#navSubtitle {{ background: {c['nav_fill']}; color: {c['nav_subtitle']}; padding: 0 16px 10px 16px;
    font-size: {s['nav_subtitle']}pt; }}
QLabel#pageTitle {{ font-size: {s['page_title']}pt; font-weight: 600; color: {c['ink']}; }}
QLabel#pageSubtitle {{ color: {c['muted']}; }}
QLabel#errorLabel {{ color: {c['error']}; }}
QLabel#hint {{ color: {c['muted']}; }}
QTableView {{ gridline-color: {c['gridline']}; selection-background-color: {c['accent']};
    selection-color: {c['on_accent']}; }}
QHeaderView::section {{
    background: {c['header_fill']}; border: none; border-right: 1px solid {c['header_border']};
    border-bottom: 1px solid {c['header_rule']}; padding: 5px 6px; font-weight: 600; color: {c['header_ink']};
}}
QTabBar::tab {{ padding: 6px 14px; }}
QTextBrowser {{ border: 1px solid {c['border']}; background: {c['base']}; color: {c['ink']}; }}
QStatusBar {{ color: {c['muted']}; }}
"""


def html_style(palette: QPalette | None = None) -> str:
    """A <style> block for QTextBrowser / rich-text content: classes by meaning
    (.muted, .faint, .error, .warning, .caution, .problem, .success, .winner, .badge)."""
    c = colours(palette)
    return (
        "<style>"
        f" body {{ color: {c['ink']}; }}"
        f" a {{ color: {c['accent_ink']}; }}"
        f" .muted {{ color: {c['muted']}; }} .faint {{ color: {c['faint']}; }}"
        f" .soft {{ color: {c['ink_soft']}; }}"
        f" .error {{ color: {c['error']}; }} .warning {{ color: {c['warning']}; }}"
        f" .caution {{ color: {c['caution']}; }} .problem {{ color: {c['problem']}; }}"
        f" .success {{ color: {c['success']}; }}"
        f" .winner {{ color: {c['winner_ink']}; background: {c['winner_fill']}; }}"
        f" .badge {{ background: {c['badge_fill']}; color: {c['badge_ink']}; padding: 2px 6px; }}"
        " </style>"
    )


def pyqtgraph_options(palette: QPalette | None = None) -> dict:
    """Keyword arguments for pyqtgraph.setConfigOptions: the chart fill and axis/text ink."""
    return {"antialias": True, "background": hex("chart_fill", palette), "foreground": hex("chart_ink", palette)}


# --- which variant the app installs -------------------------------------------------------------


def preferred_mode() -> str:
    """GPUDESK_THEME: "light", "dark" or "system" (the default; also for an unknown value)."""
    mode = os.environ.get("GPUDESK_THEME", "system").strip().lower()
    return mode if mode in MODES else "system"


def system_prefers_dark(app: QGuiApplication) -> bool:
    """Whether the desktop asks for a dark look: its colour scheme says so, or the palette the
    platform gave the application is dark. No stated preference counts as light."""
    hints = app.styleHints()
    scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return is_dark(app.palette())


def chosen_variant(app: QGuiApplication, mode: str | None = None) -> str:
    mode = mode or preferred_mode()
    if mode == DARK:
        return DARK
    if mode == LIGHT:
        return LIGHT
    return DARK if system_prefers_dark(app) else LIGHT
