"""File → Import Catalogue Update…: the dialog shows what a bundle changes and Apply writes it
(pytest-qt, through the dialog's public methods and its Apply and Cancel buttons)."""

from __future__ import annotations

import shutil
import zipfile
from types import SimpleNamespace

import pytest
from PySide6.QtWidgets import QDialog, QFileDialog

from gpudesk.core.catalogue import Catalogue, exchange
from gpudesk.ui.catalogue.update_dialog import CatalogueUpdateDialog

from ..conftest import DATA
from .conftest import open_main_window


@pytest.fixture
def other(tmp_path, catalogue_template):
    """A second user's catalogue, with the bundled catalogue only."""
    folder = tmp_path / "other"
    folder.mkdir()
    shutil.copy(catalogue_template, folder / "gpudesk.sqlite3")
    cat = Catalogue.open(f"sqlite:///{folder / 'gpudesk.sqlite3'}", DATA)
    yield cat
    cat.close()


@pytest.fixture
def bundle(catalogue, tmp_path):
    """This test's catalogue with a vendor quote and a corrected price, exported."""
    quote = catalogue.add_price_quote("h100-sxm5-80gb", "27500", when="2026-10-01", supplier="Acme GPUs")
    price = next(p for p in catalogue.items("prices") if p["origin"] == "bundled")
    catalogue.update_item("prices", price["id"], {"usd": str(price["usd"] + 100)}, source={"title": "Street check"})
    path = tmp_path / "team.zip"
    exchange.export_bundle(catalogue, path)
    return SimpleNamespace(path=path, quote=quote, price=price, new_usd=price["usd"] + 100)


def _dialog(qtbot, catalogue, path) -> CatalogueUpdateDialog:
    dialog = CatalogueUpdateDialog(catalogue, path)
    qtbot.addWidget(dialog)
    assert dialog.wait()
    return dialog


def _record_item(dialog, record_id):
    for i in range(dialog.tree.topLevelItemCount()):
        top = dialog.tree.topLevelItem(i)
        for j in range(top.childCount()):
            if top.child(j).toolTip(0) == record_id:
                return top.child(j)
    raise AssertionError(f"{record_id} is not shown")


def test_the_dialog_shows_the_changes_and_apply_writes_them(qtbot, other, bundle):
    dialog = _dialog(qtbot, other, bundle.path)
    shown = dialog.changes_shown()
    assert ("Prices", bundle.quote["id"], "added") in shown
    assert ("Prices", bundle.price["id"], "changed") in shown
    assert ("Sources", bundle.quote["source"], "added") in shown
    assert {kind for kind, _, _ in shown} == {"Prices", "Sources"}
    price = _record_item(dialog, bundle.price["id"])
    fields = {price.child(k).text(0): (price.child(k).text(2), price.child(k).text(3)) for k in range(price.childCount())}
    assert fields["Price ($)"] == (f"{bundle.price['usd']:,.0f}", f"{bundle.new_usd:,.0f}")
    heading = dialog.heading.text()
    assert "team.zip" in heading and "2 added" not in heading and "3 added, 1 changed" in heading
    assert dialog.apply_button.isEnabled()
    assert other.get("prices", bundle.quote["id"]) is None  # nothing before Apply

    with qtbot.waitSignal(dialog.applied, timeout=20000) as applied:
        dialog.apply_button.click()
    assert applied.args[0] == {"added": 3, "changed": 1, "removed": 0, "kept": 0}
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert other.get("prices", bundle.quote["id"])["usd"] == 27500
    assert other.get("prices", bundle.price["id"])["usd"] == bundle.new_usd


def test_cancel_changes_nothing(qtbot, other, bundle):
    dialog = _dialog(qtbot, other, bundle.path)
    assert dialog.apply_button.isEnabled()
    dialog.cancel_button.click()
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert other.get("prices", bundle.quote["id"]) is None
    assert other.get("prices", bundle.price["id"])["usd"] == bundle.price["usd"]


def test_a_tampered_bundle_is_refused_naming_the_file_and_cannot_be_applied(qtbot, other, bundle, tmp_path):
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, data + b"\n" if info.filename == "regions.csv" else data)
    dialog = _dialog(qtbot, other, tampered)
    heading = dialog.heading.text()
    assert "cannot be imported" in heading and "regions.csv does not match its SHA-256 checksum" in heading
    assert "Nothing was changed" in heading
    assert dialog.error[1] == "invalid" and dialog.tree.topLevelItemCount() == 0
    assert not dialog.apply_button.isEnabled() and dialog.cancel_button.text() == "Close"


def test_a_bundle_with_nothing_new_says_so(qtbot, catalogue, tmp_path):
    path = tmp_path / "same.zip"
    exchange.export_bundle(catalogue, path)
    dialog = _dialog(qtbot, catalogue, path)
    assert "No changes" in dialog.heading.text() and not dialog.apply_button.isEnabled()
    assert dialog.changes_shown() == []


def test_the_file_menu_imports_a_catalogue_update_into_the_window(qtbot, catalogue, other, tmp_path, monkeypatch):
    quote = other.add_price_quote("a100-sxm4-80gb", "9100", supplier="Colleague's reseller")
    path = tmp_path / "from-a-colleague.zip"
    exchange.export_bundle(other, path)
    win = open_main_window(qtbot)

    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args, **kw: (str(path), ""))
    seen = []

    def answer(dialog):  # what a user does in the modal dialog: read the changes, press Apply
        assert dialog.wait()
        seen.extend(dialog.changes_shown())
        with qtbot.waitSignal(dialog.applied, timeout=20000):
            dialog.apply_button.click()
        return dialog.result()

    monkeypatch.setattr(CatalogueUpdateDialog, "exec", answer)
    file_menu = win.menuBar().actions()[0].menu()
    action = next(a for a in file_menu.actions() if a.text().replace("&", "") == "Import Catalogue Update…")
    action.trigger()
    assert ("Prices", quote["id"], "added") in seen
    assert win.catalogue.get("prices", quote["id"])["usd"] == 9100
    assert win.catalogue.version in win.catalogue_status.text()
