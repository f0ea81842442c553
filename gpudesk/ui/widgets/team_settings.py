"""Preferences > Team catalogue: the server's URL, where its password comes from, and a "Test
connection" button that says what it found. The password itself goes to the system keyring (or
stays in the environment), never into the settings file."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from gpudesk.core.catalogue import team
from gpudesk.core.settings import PASSWORD_SOURCES

SOURCE_LABELS = {
    "keyring": "System keyring, then PostgreSQL's own (PGPASSWORD, .pgpass)",
    "env": f"Environment variable {team.ENV_PASSWORD}",
    "none": "PostgreSQL's own (.pgpass, PGPASSWORD, service) or none",
}


class TeamCatalogueGroup(QGroupBox):
    """The team-catalogue settings; `apply(settings)` writes them into a Settings and keeps a typed
    password in the keyring (TeamError when it cannot)."""

    def __init__(self, settings, parent=None):
        super().__init__("Team catalogue", parent)
        outer = QVBoxLayout(self)  # wrapped labels outside the form: a form does not give them their height
        form = QFormLayout()
        intro = QLabel("Share one catalogue, its quotes and measurements with your team on a PostgreSQL server. "
                       "Empty: this computer's own database. Applies at the next start.")
        intro.setWordWrap(True)
        self.url = QLineEdit(settings.database_url)
        self.url.setObjectName("team_url")
        self.url.setPlaceholderText("postgresql+psycopg://you@server:5432/catalogue (no password here)")
        self.source = QComboBox()
        self.source.setObjectName("team_password_source")
        for key in PASSWORD_SOURCES:
            self.source.addItem(SOURCE_LABELS[key], key)
        self.source.setCurrentIndex(max(0, self.source.findData(settings.password_source)))
        self.password = QLineEdit()
        self.password.setObjectName("team_password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("type it to keep it in the keyring; empty: the one kept")
        self.test = QPushButton("Test connection")
        self.test.setObjectName("team_test")
        self.test.clicked.connect(self.test_connection)
        row = QHBoxLayout()
        row.addWidget(self.password, 1)
        row.addWidget(self.test)
        self.result = QLabel("")
        self.result.setObjectName("team_result")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Server URL", self.url)
        form.addRow("Password from", self.source)
        form.addRow("Password", row)
        outer.addWidget(intro)
        outer.addLayout(form)
        outer.addWidget(self.result)
        self.source.currentIndexChanged.connect(self._source_changed)
        self._source_changed()

    def _source_changed(self) -> None:
        keyring = self.source.currentData() == "keyring"
        self.password.setEnabled(keyring)
        if not keyring:
            self.password.clear()
        ok, why = team.keyring_status()
        if keyring and not ok:
            self._show(f"{why}.", problem=True)

    def _url_to_test(self):
        """The URL as typed, with the typed password when there is one (not stored by a test)."""
        url = self.url.text().strip()
        if not team.is_server_url(url):
            raise team.TeamError("Enter the server's URL first, e.g. postgresql+psycopg://you@server:5432/catalogue")
        if self.password.text():
            return team.parse_url(url).set(password=self.password.text()), "none"
        return url, self.source.currentData()

    def test_connection(self) -> None:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            url, source = self._url_to_test()
            if isinstance(url, str):
                found = team.probe(url, source)
            else:
                found = team.probe(url.render_as_string(hide_password=False), source)
        except team.TeamError as exc:
            self._show(str(exc), problem=True)
            return
        finally:
            QApplication.restoreOverrideCursor()
        self._show("Connected. " + "\n".join(found.lines()))

    def _show(self, text: str, problem: bool = False) -> None:
        from gpudesk.ui import theme

        self.result.setStyleSheet(f"color: {theme.hex('error')};" if problem else "")
        self.result.setText(text)

    def apply(self, settings) -> None:
        """Copy the fields into `settings`; a typed password goes to the keyring first."""
        url = self.url.text().strip()
        settings.database_url = url
        settings.password_source = self.source.currentData()
        if self.password.text() and team.is_server_url(url):
            team.store_password(url, self.password.text())
