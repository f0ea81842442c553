"""The team catalogue in the window, on a real PostgreSQL server: Preferences > Team catalogue and its
Test connection, the question when the server is unreachable, and an edit that meets someone
else's."""

from __future__ import annotations

import json
import os

import pytest

from gpudesk.core.catalogue import open_catalogue, team
from gpudesk.core.settings import Settings, load_settings, save_settings, settings_path
from tests.team.conftest import TEAM_PASSWORD
from tests.test_team_settings import memory_keyring  # noqa: F401 - the fixture

pytestmark = pytest.mark.team

SHOTS = os.environ.get("GPUDESK_SHOTS")  # a folder: save screenshots there to look at them


def _shot(widget, name: str) -> None:
    if SHOTS:
        widget.grab().save(os.path.join(SHOTS, f"{name}.png"))


def test_preferences_test_connection_says_what_it_found_and_the_password_goes_to_the_keyring(
        qtbot, pg_server, team_url, memory_keyring, monkeypatch):  # noqa: F811
    from gpudesk.ui.widgets.preferences import PreferencesDialog

    monkeypatch.delenv("GPUDESK_DB_PASSWORD")
    dialog = PreferencesDialog(None)
    qtbot.addWidget(dialog)
    dialog.resize(720, 560)
    dialog.pages.setCurrentWidget(dialog.team.parentWidget())  # the "Reports and team" page
    dialog.team.url.setText(team_url)
    dialog.team.source.setCurrentIndex(dialog.team.source.findData("keyring"))
    dialog.team.password.setText("wrong")
    dialog.team.test.click()
    assert "refused the password of user 'team'" in dialog.team.result.text()
    dialog.team.password.setText(TEAM_PASSWORD)
    dialog.team.test.click()
    text = dialog.team.result.text()
    assert text.startswith("Connected.") and "Server: PostgreSQL 1" in text and "Signed in as: team" in text
    assert "not set up yet" in text
    _shot(dialog, "preferences-team")
    dialog.accept()
    stored = json.loads(settings_path().read_text())
    assert stored["database_url"] == team_url and stored["password_source"] == "keyring"
    assert TEAM_PASSWORD not in settings_path().read_text()
    assert memory_keyring.store[("gpudesk", team.keyring_account(team_url))] == TEAM_PASSWORD
    catalogue = open_catalogue()  # the next start: URL from the settings, password from the keyring
    try:
        assert catalogue.engine.dialect.name == "postgresql" and catalogue.get("accelerators", "h100-sxm5-80gb")
    finally:
        catalogue.close()


def test_an_unreachable_team_catalogue_offers_its_local_copy_read_only_or_this_computers_database(
        qtbot, own_pg_server, monkeypatch):
    from gpudesk.ui.main_window import MainWindow
    from gpudesk.ui.window import offline
    from tests.team.conftest import new_database

    monkeypatch.setenv("GPUDESK_DB_PASSWORD", TEAM_PASSWORD)
    url = own_pg_server.url(new_database(own_pg_server))
    save_settings(Settings(database_url=url, password_source="env", author="alice"))
    first = MainWindow()
    qtbot.addWidget(first)
    assert first.wait_loaded(120000)
    first._loader.wait(60000)  # the local copy is written after the catalogue opened
    assert first.catalogue.engine.dialect.name == "postgresql"
    assert "team catalogue postgresql+psycopg://team@127.0.0.1" in first.catalogue_status.text()
    assert team.copy_time(team.local_copy_path(url))
    first.catalogue.close()
    own_pg_server.stop("immediate")

    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1320, 820)
    window.show()
    window.start()
    qtbot.waitUntil(lambda: window.offline_dialog is not None, timeout=60000)
    box = window.offline_dialog
    assert "cannot be reached: no server answers at 127.0.0.1" in box.text()
    assert "opens read-only" in box.informativeText() and "stays on this computer" in box.informativeText()
    _shot(box, "offline-question")
    labels = sorted(b.text() for b in box.buttons())  # their order is the platform's
    assert labels == ["Open the local copy (read-only)", "Quit", "Retry", "Use this computer's database"]
    box.done(0)  # closing it without an answer quits nothing here: choose below
    offline.choose(window, team.ServerUnreachable(url, "test"), offline.LOCAL_COPY)
    assert window.wait_loaded(120000)
    assert window.catalogue.read_only and window.catalogue.get("accelerators", "h100-sxm5-80gb")
    assert "read-only copy of the team catalogue" in window.catalogue_status.text()
    view = window.catalogue_view
    assert not view.add_button.isEnabled() and not view.quote_button.isEnabled()  # nothing can be changed
    window.catalogue.close()

    offline.choose(window, team.ServerUnreachable(url, "test"), offline.THIS_COMPUTER)
    assert window.wait_loaded(120000)
    assert not window.catalogue.read_only and window.catalogue.engine.dialect.name == "sqlite"
    assert "edits stay here, not in the team catalogue" in window.catalogue_status.text()
    _shot(window, "offline-this-computer")
    window.catalogue.close()
    assert load_settings().database_url == url  # nothing about the team catalogue was forgotten


def test_an_edit_that_meets_someone_elses_shows_both_and_the_next_save_keeps_yours(qtbot, team_url):
    from gpudesk.ui.catalogue.dialogs import EntryDialog

    save_settings(Settings(password_source="env"))
    alice, bob = open_catalogue(team_url), open_catalogue(team_url)
    alice.user, bob.user = "alice", "bob"
    try:
        quote = alice.add_price_quote("h100-sxm5-80gb", "24500", when="2026-11-20", supplier="Acme")
        dialog = EntryDialog(bob, "prices", bob.get("prices", quote["id"]))
        qtbot.addWidget(dialog)
        dialog.resize(640, 720)
        alice.update_item("prices", quote["id"], {"usd": "23900"}, expected_version=quote["version"])
        dialog.editors["usd"].editor.setText("25100")
        dialog.accept()
        assert dialog.result() == 0 and dialog.result_record is None  # still open, nothing saved
        assert dialog.editors["usd"].error.text() == "alice saved: 23900"
        assert "alice saved" in dialog.message.text() and "Cancel keeps their values" in dialog.message.text()
        _shot(dialog, "conflict")
        dialog.accept()  # save again: yours over theirs, knowingly
        assert dialog.result_record["usd"] == 25100 and dialog.result_record["updated_by"] == "bob"
    finally:
        alice.close()
        bob.close()


def test_reload_shows_what_someone_else_added_with_who_added_it(qtbot, team_url):
    from gpudesk.ui.catalogue.view import KIND_ORDER, CatalogueView

    save_settings(Settings(password_source="env"))
    alice, bob = open_catalogue(team_url), open_catalogue(team_url)
    alice.user = "alice"
    try:
        view = CatalogueView()
        qtbot.addWidget(view)
        view.resize(1320, 760)
        view.set_catalogue(bob)
        view.tabs.setCurrentIndex(KIND_ORDER.index("prices"))
        before = len(view.visible_rows())
        quote = alice.add_price_quote("h100-sxm5-80gb", "24500", when="2026-11-20", supplier="Acme")
        assert len(view.visible_rows()) == before  # bob's window has not looked yet
        view.reload_action.trigger()
        assert len(view.visible_rows()) == before + 1
        assert view.select_id(quote["id"])
        assert "Team entry Added by alice on 2026" in view.detail.toPlainText()
        _shot(view, "reloaded-quote")
    finally:
        alice.close()
        bob.close()
