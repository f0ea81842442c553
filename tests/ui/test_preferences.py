"""Preferences: the dialog shows the stored settings, saves what the user changes, and a value the
settings refuse is named in the dialog and changes nothing stored."""

from __future__ import annotations

import pytest

from gpudesk.core.settings import load_settings
from gpudesk.ui.widgets.preferences import PreferencesDialog


def test_the_dialog_shows_and_saves_the_settings(qtbot, catalogue):
    dialog = PreferencesDialog(catalogue)
    qtbot.addWidget(dialog)
    before = load_settings()
    assert dialog.region.currentData() == before.region
    assert dialog.pue.value() == pytest.approx(before.pue)
    assert dialog.region.count() >= 10  # the catalogue's grid regions
    dialog.pue.setValue(1.35)
    dialog.utilization.setValue(45)
    dialog.lifetime.setValue(5)
    dialog.author.setText("  A. Buyer ")
    dialog.page_size.setCurrentText("Letter")
    dialog.calibration.setChecked(not before.calibration_enabled)
    dialog.accept()
    after = load_settings()
    assert after.pue == pytest.approx(1.35) and after.utilization == pytest.approx(0.45)
    assert after.lifetime_years == pytest.approx(5) and after.author == "A. Buyer" and after.page_size == "Letter"
    assert after.calibration_enabled is (not before.calibration_enabled)


def test_a_refused_value_is_named_and_nothing_is_stored(qtbot, catalogue, monkeypatch):
    from gpudesk.core import settings as settings_module
    from gpudesk.ui.widgets import preferences

    dialog = PreferencesDialog(catalogue)
    qtbot.addWidget(dialog)
    before = load_settings()
    dialog.pue.setValue(2.5)

    def refuse(_settings):
        raise settings_module.SettingsError("settings.json: the data folder is read-only")

    monkeypatch.setattr(preferences, "save_settings", refuse)
    dialog.accept()
    assert "Not saved" in dialog.message.text() and "read-only" in dialog.message.text()
    assert not dialog.message.isHidden()
    assert load_settings().pue == pytest.approx(before.pue)


def test_cost_of_ownership_figures_are_saved_and_zero_means_the_catalogue(qtbot, catalogue):
    dialog = PreferencesDialog(catalogue)
    qtbot.addWidget(dialog)
    assert dialog.tco_fields["host_usd_per_node"].value() == 0  # nothing set: the catalogue's
    assert dialog.tco_fields["host_usd_per_node"].text() == "the catalogue's"
    dialog.tco_fields["host_usd_per_node"].setValue(45000)
    dialog.tco_fields["facility_usd_per_kw"].setValue(9000)
    dialog.facility.setChecked(False)
    dialog.accept()
    saved = load_settings().tco
    assert saved == {"host_usd_per_node": 45000.0, "facility_usd_per_kw": 9000.0, "facility": False}
    again = PreferencesDialog(catalogue)
    qtbot.addWidget(again)
    assert again.tco_fields["host_usd_per_node"].value() == 45000 and not again.facility.isChecked()
    again.tco_fields["host_usd_per_node"].setValue(0)
    again.facility.setChecked(True)
    again.accept()
    assert load_settings().tco == {"facility_usd_per_kw": 9000.0}
