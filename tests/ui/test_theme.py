"""One theme (gpudesk.ui.theme): no colour is written outside it, the light variant is the look the
app always had, and every view keeps its text readable (WCAG contrast >= 4.5) under a dark palette.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLabel, QTextBrowser

from gpudesk.ui import theme
from gpudesk.ui.main_window import PAGES

from .conftest import open_main_window

UI = Path(theme.__file__).resolve().parent
HEX = re.compile(r"#[0-9a-fA-F]{6}(?:[0-9a-fA-F]{2})?\b")
# Files that still hold colour literals, each because another change owns it right now. Remove an
# entry once its colours come from gpudesk.ui.theme (the theme has canvas_* and node_* colours ready).
STILL_HARDCODED: set[str] = set()
VIEWS = [key for key, *_ in PAGES]

# A dark desktop palette that is not gpudesk's own (the colours of KDE's Breeze Dark), so the
# check covers a palette the theme has to adapt to.
FOREIGN_DARK = {
    QPalette.ColorRole.Window: "#2a2e32", QPalette.ColorRole.WindowText: "#fcfcfc",
    QPalette.ColorRole.Base: "#1b1e20", QPalette.ColorRole.AlternateBase: "#232629",
    QPalette.ColorRole.Text: "#fcfcfc", QPalette.ColorRole.Button: "#31363b",
    QPalette.ColorRole.ButtonText: "#fcfcfc", QPalette.ColorRole.Highlight: "#3daee9",
    QPalette.ColorRole.HighlightedText: "#fcfcfc", QPalette.ColorRole.Link: "#1d99f3",
    QPalette.ColorRole.ToolTipBase: "#31363b", QPalette.ColorRole.ToolTipText: "#fcfcfc",
    QPalette.ColorRole.PlaceholderText: "#a1a9b1",
}


def _palette(colours: dict) -> QPalette:
    pal = QPalette()
    for role, value in colours.items():
        pal.setColor(role, QColor(value))
    return pal


@pytest.fixture
def restore_app(qapp):
    """Whatever a test does to the application's palette, style and style sheet is undone."""
    palette, sheet, style = QPalette(qapp.palette()), qapp.styleSheet(), qapp.style().name()
    yield qapp
    qapp.setStyleSheet(sheet)
    qapp.setStyle(style)
    qapp.setPalette(palette)


# --- the literal colours ------------------------------------------------------------------------


def test_no_hex_colour_outside_the_theme():
    found = []
    for path in sorted(UI.rglob("*.py")):
        rel = path.relative_to(UI).as_posix()
        if rel == "theme.py" or rel in STILL_HARDCODED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"gpudesk/ui/{rel}:{n}: {m}" for m in HEX.findall(line)]
    assert not found, "colours belong in gpudesk/ui/theme.py:\n" + "\n".join(found)


def test_the_allowed_files_exist():
    """An entry for a file that was renamed or removed would silently allow nothing."""
    assert all((UI / rel).exists() for rel in STILL_HARDCODED)


def test_light_variant_is_the_look_the_app_always_had():
    light = theme.VARIANTS[theme.LIGHT]
    assert (light["window"], light["base"], light["ink"], light["accent"]) == ("#f4f5f7", "#ffffff", "#1d2330", "#2f6fde")
    assert (light["winner_fill"], light["winner_ink"], light["section_fill"]) == ("#dff3e7", "#0b6b3a", "#eef1f5")
    assert (light["muted"], light["faint"], light["error"], light["warning"]) == ("#5b6475", "#666e80", "#b3261e", "#9a6700")
    # gpudesk's own light palette gets these colours unchanged (no contrast adjustment)
    own = theme.colours(theme.make_palette(theme.LIGHT))
    assert all(own[k] == v for k, v in light.items())
    assert theme.print_colour("winner_fill").name() == "#dff3e7"


def test_contrast_ratio_matches_wcag_examples():
    assert theme.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert theme.contrast("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert theme.contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the AA grey on white


def test_dark_variant_text_reaches_4_5_on_its_grounds():
    dark = theme.colours(theme.make_palette(theme.DARK))
    low = [(t, g, round(theme.contrast(dark[t], dark[g]), 2))
           for t in theme.TEXT_ON_PAGE for g in ("base", "window", "alt_base", "section_fill")
           if theme.contrast(dark[t], dark[g]) < theme.MIN_CONTRAST]
    low += [(t, g, round(theme.contrast(dark[t], dark[g]), 2)) for t, g in theme.TEXT_ON_FILL
            if theme.contrast(dark[t], dark[g]) < theme.MIN_CONTRAST]
    low += [("faint", "winner_fill", round(theme.contrast(dark["faint"], dark["winner_fill"]), 2))] \
        if theme.contrast(dark["faint"], dark["winner_fill"]) < theme.MIN_CONTRAST else []
    assert not low


def test_screen_colours_follow_the_palette(qapp):
    dark = theme.colours(theme.make_palette(theme.DARK))
    light = theme.colours(theme.make_palette(theme.LIGHT))
    assert theme.variant(theme.make_palette(theme.DARK)) == theme.DARK
    assert QColor(dark["ink"]).lightnessF() > 0.8 and QColor(light["ink"]).lightnessF() < 0.2
    assert theme.series(0, theme.make_palette(theme.DARK)).name() == theme.SERIES[theme.DARK][0]
    # a palette the theme does not know: its text colours are moved until they read on it
    foreign = _palette(FOREIGN_DARK)
    adapted = theme.colours(foreign)
    for token in theme.TEXT_ON_PAGE:
        for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Window):
            assert theme.contrast(adapted[token], foreign.color(role)) >= theme.MIN_CONTRAST, token
    grey_light = _palette({QPalette.ColorRole.Window: "#d0d0d0", QPalette.ColorRole.Base: "#e0e0e0",
                           QPalette.ColorRole.Text: "#000000"})
    assert theme.contrast(theme.hex("muted", grey_light), "#d0d0d0") >= theme.MIN_CONTRAST
    assert theme.hex("muted", grey_light) != "#5b6475"  # moved towards black to get there


def test_unknown_colour_name_is_refused_with_its_name():
    with pytest.raises(KeyError, match="no colour named 'winer_fill'"):
        theme.colour("winer_fill")


def test_style_sheet_and_html_use_the_variant(qapp):
    dark = theme.make_palette(theme.DARK)
    css = theme.css(dark)
    assert f"QLabel#hint {{ color: {theme.hex('muted', dark)}; }}" in css
    assert "#1d2330" not in css and "#5b6475" not in css
    assert f".error {{ color: {theme.hex('error', dark)}; }}" in theme.html_style(dark)
    assert theme.pyqtgraph_options(dark)["background"] == theme.VARIANTS[theme.DARK]["chart_fill"]


@pytest.mark.parametrize(("mode", "platform_dark", "expected"), [
    ("light", True, "light"), ("dark", False, "dark"), ("system", True, "dark"), ("system", False, "light"),
    ("nonsense", True, "dark"),  # an unknown value means "system"
])
def test_gpudesk_theme_picks_the_palette(restore_app, monkeypatch, mode, platform_dark, expected):
    from gpudesk.ui.app import apply_style

    monkeypatch.setenv("GPUDESK_THEME", mode)
    restore_app.setPalette(_palette(FOREIGN_DARK) if platform_dark else _palette({QPalette.ColorRole.Window: "#efefef"}))
    apply_style(restore_app)
    window = restore_app.palette().color(QPalette.ColorRole.Window).name()
    assert window == theme.VARIANTS[expected]["window"]
    assert f"color: {theme.VARIANTS[expected]['nav_ink']}" in restore_app.styleSheet()


# --- every view, dark ---------------------------------------------------------------------------


def _inline_colours(html: str) -> list[str]:
    return re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", html)


def _unreadable(win) -> list[str]:
    """Text in `win` (labels, rich text, table cells and headers, text browsers) whose contrast
    against what it is drawn on is under 4.5."""
    bad = []

    def check(where: str, fg: QColor, bg: QColor) -> None:
        ratio = theme.contrast(fg, bg)
        if ratio < theme.MIN_CONTRAST:
            bad.append(f"{where}: {fg.name()} on {bg.name()} = {ratio:.2f}")

    for label in win.findChildren(QLabel):
        if not label.isVisibleTo(win) or not label.text().strip() or not label.isEnabled():
            continue
        pal = label.palette()
        bg = pal.color(label.backgroundRole())
        name = label.objectName() or label.text()[:30]
        check(f"label {name!r}", pal.color(label.foregroundRole()), bg)
        for c in _inline_colours(label.text()):
            check(f"label {name!r} inline", QColor(c), bg)
    for browser in win.findChildren(QTextBrowser):
        if not browser.isVisibleTo(win):
            continue
        bg = browser.viewport().palette().color(QPalette.ColorRole.Base)
        name = browser.objectName() or type(browser.parent()).__name__
        check(f"browser {name!r}", browser.palette().color(QPalette.ColorRole.Text), bg)
        for c in _inline_colours(browser.toHtml()):
            check(f"browser {name!r} inline", QColor(c), bg)
    for view in win.findChildren(QAbstractItemView):
        model = view.model()
        if model is None or not view.isVisibleTo(win):
            continue
        pal = view.palette()
        name = view.objectName() or type(view).__name__
        for r in range(min(model.rowCount(), 60)):
            for c in range(model.columnCount()):
                index = model.index(r, c)
                if not index.data(Qt.ItemDataRole.DisplayRole):
                    continue
                fg = index.data(Qt.ItemDataRole.ForegroundRole)
                bg = index.data(Qt.ItemDataRole.BackgroundRole)
                ground = pal.color(QPalette.ColorRole.AlternateBase if view.alternatingRowColors() and r % 2
                                   else QPalette.ColorRole.Base)
                check(f"{name} row {r} col {c}", fg.color() if fg is not None else pal.color(QPalette.ColorRole.Text),
                      bg.color() if bg is not None else ground)
        header = getattr(view, "horizontalHeader", lambda: None)()
        if header is not None and header.isVisibleTo(win):
            for c in range(model.columnCount()):
                fg = model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ForegroundRole)
                check(f"{name} header {c}", fg.color() if fg is not None else theme.colour("header_ink"),
                      theme.colour("header_fill"))
    return bad


def _show_all(qtbot, win) -> None:
    for key in VIEWS:
        win.show_page(key)
        qtbot.wait(150)


@pytest.mark.parametrize("palette", ["gpudesk dark (GPUDESK_THEME=system on a dark desktop)", "Breeze Dark as is"])
def test_every_view_reads_well_under_a_dark_palette(qtbot, catalogue, restore_app, monkeypatch, palette):
    from gpudesk.ui.app import apply_style

    monkeypatch.setenv("GPUDESK_THEME", "system")
    restore_app.setPalette(_palette(FOREIGN_DARK))
    if palette.startswith("gpudesk"):
        apply_style(restore_app)  # what make_application does at start-up
        assert theme.variant() == theme.DARK
    else:
        restore_app.setStyleSheet(theme.css())  # the desktop's palette kept, gpudesk's style sheet on top
    win = open_main_window(qtbot)
    cat = win.page("catalogue")
    cat.table.selectRow(0)  # the detail pane with its figures, sources and badges
    _show_all(qtbot, win)
    problems = []
    for key in VIEWS:
        win.show_page(key)
        qtbot.wait(50)
        problems += [f"{key}: {p}" for p in _unreadable(win.page(key))]
    assert not problems, "\n".join(problems)


def test_every_view_reads_well_in_the_light_variant(qtbot, catalogue, restore_app, monkeypatch):
    """The same check in gpudesk's own light look: every text colour, the faint grey of absent
    values included, reads at 4.5:1 or better."""
    from gpudesk.ui.app import apply_style

    apply_style(restore_app, "light")
    win = open_main_window(qtbot)
    win.page("catalogue").table.selectRow(0)
    _show_all(qtbot, win)
    problems = [f"{key}: {p}" for key in VIEWS for p in _unreadable(win.page(key))]
    assert not problems, "\n".join(problems)


def test_qapplication_palette_is_left_alone_by_views(qtbot, catalogue, restore_app):
    """Building the views does not put a light palette back over a dark one."""
    restore_app.setPalette(_palette(FOREIGN_DARK))
    open_main_window(qtbot)
    assert QApplication.palette().color(QPalette.ColorRole.Window).name() == "#2a2e32"


def _pdf_colours(path) -> set[tuple[float, float, float]]:
    """Every colour the PDF's pages set (Qt writes them with the scn / SCN operators)."""
    from pypdf import PdfReader

    found = set()
    for page in PdfReader(str(path)).pages:
        data = page.get_contents().get_data().decode("latin-1")
        for r, g, b in re.findall(r"([\d.]+) ([\d.]+) ([\d.]+) (?:scn|SCN|rg|RG)\b", data):
            found.add((round(float(r), 2), round(float(g), 2), round(float(b), 2)))
    return found


def test_pdf_prints_in_the_print_colours_under_a_dark_palette(catalogue, tmp_path, restore_app):
    """The report goes on white paper: a dark screen palette must not turn its text light."""
    from gpudesk.core.compare import build_comparison
    from gpudesk.core.scenario import load_scenario
    from gpudesk.ui.render.pdf import render_comparison_pdf

    from ..conftest import ROOT

    comp = build_comparison(load_scenario(ROOT / "resources" / "examples" / "nanochat-8xh100-rented-vs-dgx-spark.json"),
                            catalogue)
    restore_app.setPalette(theme.make_palette(theme.DARK))
    colours = _pdf_colours(render_comparison_pdf(comp, tmp_path / "dark.pdf"))
    screen_only = {tuple(round(v, 2) for v in QColor(theme.VARIANTS[theme.DARK][t]).getRgbF()[:3])
                   for t in ("ink", "accent_ink", "muted")}
    ink = tuple(round(v, 2) for v in theme.print_colour("ink").getRgbF()[:3])
    assert ink in colours
    assert not colours & screen_only
