"""The team catalogue's server cannot be reached at start-up: say so in words and offer to go on
with its local copy (read-only), with this computer's own database (editable; what is added there
stays on this computer, and the window says so), to retry, or to quit."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

log = logging.getLogger("gpudesk.ui.main_window")

LOCAL_COPY, THIS_COMPUTER, RETRY, QUIT = "local copy", "this computer", "retry", "quit"


def ask(window, error) -> QMessageBox:
    """Show the choices; the answer is carried out by `choose` (tests call it directly)."""
    from PySide6.QtWidgets import QMessageBox  # created when first used, not in the first frame

    from gpudesk.core.catalogue import team

    window.catalogue_status.setText("Team catalogue unreachable")
    window.catalogueFailed.emit(str(error))
    copy_path = team.local_copy_path(error.url)
    copied = team.copy_time(copy_path)
    box = QMessageBox(QMessageBox.Icon.Warning, "The team catalogue cannot be reached",
                      f"The team catalogue at {team.display_url(error.url)} cannot be reached: {error.reason}.",
                      QMessageBox.StandardButton.NoButton, window)
    lines = []
    if copied:
        lines.append(f"• Its local copy, taken {copied[:16].replace('T', ' ')} UTC, opens read-only: compare, "
                     "estimate and report with the team's figures; nothing can be changed.")
    else:
        lines.append("• There is no local copy of it on this computer yet (one is kept once it has opened).")
    lines.append("• This computer's own database can be edited, but what you add there stays on this computer: "
                 "it does not reach the team catalogue.")
    box.setInformativeText("\n".join(lines))
    buttons = {}
    if copied:
        buttons[LOCAL_COPY] = box.addButton("Open the local copy (read-only)", QMessageBox.ButtonRole.AcceptRole)
    buttons[THIS_COMPUTER] = box.addButton("Use this computer's database", QMessageBox.ButtonRole.ActionRole)
    buttons[RETRY] = box.addButton("Retry", QMessageBox.ButtonRole.ActionRole)
    buttons[QUIT] = box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(buttons.get(LOCAL_COPY, buttons[RETRY]))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def answered(_result: int) -> None:
        clicked = box.clickedButton()
        choice = next((name for name, button in buttons.items() if button is clicked), QUIT)
        window.offline_dialog = None
        choose(window, error, choice)

    box.finished.connect(answered)
    window.offline_dialog = box
    box.open()
    return box


def choose(window, error, choice: str) -> None:
    """Carry out an answer: open the local copy read-only, this computer's database, retry, or quit."""
    from gpudesk.core import paths
    from gpudesk.core.catalogue import team

    if window._loader is not None:
        window._loader.wait()
        window._loader = None
    if choice == QUIT:
        window.close()
    elif choice == LOCAL_COPY:
        window.start(f"sqlite:///{team.local_copy_path(error.url)}", read_only_copy_of=team.display_url(error.url))
    elif choice == THIS_COMPUTER:
        window.working_locally_instead_of = team.display_url(error.url)
        window.start(f"sqlite:///{paths.database_path()}")
    else:
        window.start()


def status_text(window, catalogue) -> str:
    """The status bar's words for a catalogue opened instead of an unreachable team catalogue ("" else)."""
    from gpudesk.core.catalogue import team

    copy_of = getattr(catalogue, "offline_from", None)
    if copy_of:
        engine = getattr(catalogue, "engine", None)
        path = engine.url.database if engine is not None else ""
        when = team.copy_time(Path(path)) if path else None
        taken = f" as of {when[:16].replace('T', ' ')} UTC" if when else ""
        return f"Catalogue {catalogue.version}  ·  read-only copy of the team catalogue {copy_of}{taken}"
    read_only = getattr(catalogue, "read_only", False)
    if isinstance(read_only, str) and read_only:  # a database this program cannot write: why, and what it means
        return f"Catalogue {catalogue.version}  ·  {read_only} (quotes, edits, imports, reports)"
    instead = getattr(window, "working_locally_instead_of", None)
    if instead:
        return (f"Catalogue {catalogue.version}  ·  this computer's database: edits stay here, not in the team "
                f"catalogue {instead}")
    return ""
