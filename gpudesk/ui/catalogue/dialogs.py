"""Dialogs to add or edit the user's own catalogue entries and price quotes.

Forms are generated from the field registry; values are validated by the catalogue itself, and a
refused value is shown under its field in words, with nothing written.
"""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gpudesk.core.catalogue import EditError
from gpudesk.core.catalogue.fields import KIND_NOUNS, KINDS, Field
from gpudesk.core.catalogue.reading import ConflictError
from gpudesk.ui.widgets.forms import add_message_and_buttons


class _FieldEditor(QWidget):
    """One form row: the editor, its unit, and a line for its error message."""

    def __init__(self, spec: Field, choices: list[str] | None, parent=None):
        super().__init__(parent)
        self.spec = spec
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        if spec.type == "bool":
            self.editor = QComboBox()
            self.editor.addItems(["", "yes", "no"])
        elif choices is not None:
            self.editor = QComboBox()
            self.editor.setEditable(spec.type == "ref")
            self.editor.addItems([""] + choices)
        else:
            self.editor = QLineEdit()
            if spec.type == "date":
                self.editor.setPlaceholderText("YYYY-MM-DD")
            elif spec.help:
                self.editor.setPlaceholderText(spec.help)
        self.editor.setObjectName(f"field_{spec.name}")
        row.addWidget(self.editor, 1)
        if spec.unit and spec.unit != "slug":
            unit = QLabel(spec.unit)
            unit.setObjectName("hint")
            unit.setMinimumWidth(70)
            row.addWidget(unit)
        layout.addLayout(row)
        self.error = QLabel("")
        self.error.setObjectName("errorLabel")
        self.error.setWordWrap(True)
        self.error.hide()
        layout.addWidget(self.error)

    def text(self) -> str:
        if isinstance(self.editor, QComboBox):
            return self.editor.currentText().strip()
        return self.editor.text().strip()

    def set_value(self, value) -> None:
        if value is None:
            text = ""
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, float):
            text = f"{value:.10g}"
        else:
            text = str(value)
        if isinstance(self.editor, QComboBox):
            i = self.editor.findText(text)
            if i < 0 and self.editor.isEditable():
                self.editor.setEditText(text)
            else:
                self.editor.setCurrentIndex(max(0, i))
        else:
            self.editor.setText(text)

    def set_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))


class EntryDialog(QDialog):
    """Add (record=None) or edit one catalogue entry of `kind`."""

    def __init__(self, catalogue, kind: str, record: dict | None = None, parent=None):
        super().__init__(parent)
        self.catalogue = catalogue
        self.kind = kind
        self.record = record
        self.result_record: dict | None = None
        noun = KIND_NOUNS[kind]
        self.setWindowTitle(f"Edit {noun}" if record else f"Add {noun}")
        self.setMinimumWidth(520)

        outer = QVBoxLayout(self)
        intro = QLabel(
            f"Edit the figures of <b>{record['id']}</b>. Your changes are kept when the catalogue updates."
            if record else f"Add your own {noun}. Empty figures stay unknown."
        )
        intro.setWordWrap(True)
        outer.addWidget(intro)

        outer.addWidget(self._figures(catalogue, kind, record), 1)
        outer.addWidget(self._source_box())

        self.message = add_message_and_buttons(self, outer)

    def _figures(self, catalogue, kind: str, record: dict | None) -> QScrollArea:
        """A scrolling form with an editor per field (the ID fixed when editing; today's date when adding)."""
        form_host = QWidget()
        form = QFormLayout(form_host)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.editors: dict[str, _FieldEditor] = {}
        for spec in KINDS[kind]:
            if spec.name in ("source", "grid_source", "electricity_source"):
                continue
            choices = None
            if spec.type == "choice":
                choices = list(spec.choices)
            elif spec.type == "ref":
                choices = sorted(r["id"] for t in spec.ref.split("|") for r in catalogue.items(t))
            editor = _FieldEditor(spec, choices)
            if record is not None:
                editor.set_value(record.get(spec.name))
                if spec.name == "id":
                    editor.editor.setEnabled(False)
            elif spec.name == "date":
                editor.set_value(date.today().isoformat())
            label = spec.label + (" *" if spec.required else "")
            form.addRow(label, editor)
            self.editors[spec.name] = editor
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_host)
        scroll.setMinimumHeight(380)
        return scroll

    def _source_box(self) -> QGroupBox:
        """Where the user's figures come from: a title and a link, with a line for what is wrong."""
        src_box = QGroupBox("Where your figures come from")
        src_form = QFormLayout(src_box)
        self.source_title = QLineEdit()
        self.source_title.setObjectName("source_title")
        self.source_title.setPlaceholderText("e.g. Vendor quote Q-1234, or a datasheet title (empty: 'entered by you')")
        self.source_url = QLineEdit()
        self.source_url.setObjectName("source_url")
        self.source_url.setPlaceholderText("https://…")
        src_form.addRow("Source", self.source_title)
        src_form.addRow("Link", self.source_url)
        self.source_error = QLabel("")
        self.source_error.setObjectName("errorLabel")
        self.source_error.hide()
        src_form.addRow("", self.source_error)
        return src_box

    def values(self) -> dict:
        return {name: editor.text() for name, editor in self.editors.items()}

    def source(self) -> dict | None:
        title = self.source_title.text().strip()
        if not title and not self.source_url.text().strip():
            return None
        return {"title": title or "Entered by the user", "url": self.source_url.text().strip()}

    def accept(self) -> None:
        for editor in self.editors.values():
            editor.set_error(None)
        self.source_error.hide()
        self.message.hide()
        try:
            if self.record is None:
                self.result_record = self.catalogue.add_item(self.kind, self.values(), source=self.source())
            else:
                values = {k: v for k, v in self.values().items() if k != "id"}
                self.result_record = self.catalogue.update_item(self.kind, self.record["id"], values, source=self.source(),
                                                                expected_version=self.record.get("version"))
        except ConflictError as exc:
            self.show_conflict(exc)
            return
        except EditError as exc:
            self.show_problems(exc.problems)
            return
        super().accept()

    def show_conflict(self, conflict: ConflictError) -> None:
        """Someone saved this record meanwhile: show their value beside each of yours that differs;
        the next Save keeps yours over their version (or Cancel keeps theirs)."""
        self.record = conflict.theirs
        who = conflict.theirs.get("updated_by") or "someone else"
        for name in conflict.fields:
            if name in self.editors:
                theirs = conflict.theirs.get(name)
                if isinstance(theirs, float) and theirs.is_integer():
                    theirs = int(theirs)
                self.editors[name].set_error(f"{who} saved: {'(empty)' if theirs in (None, '') else theirs}")
        self.message.setText(f"{conflict}\nCancel keeps their values.")
        self.message.show()

    def show_problems(self, problems: dict[str, str]) -> None:
        first = None
        general = []
        for name, message in problems.items():
            if name in self.editors:
                self.editors[name].set_error(message)
                first = first or self.editors[name].editor
            elif name.startswith("source"):
                self.source_error.setText(message)
                self.source_error.show()
            else:
                general.append(message)
        summary = "Nothing was saved: " + ("; ".join(general) if general else "correct the fields marked in red.")
        self.message.setText(summary)
        self.message.show()
        if first is not None:
            first.setFocus(Qt.FocusReason.OtherFocusReason)


class QuoteDialog(QDialog):
    """Record a price quote for an accelerator or a system."""

    def __init__(self, catalogue, item_id: str | None = None, parent=None):
        super().__init__(parent)
        self.catalogue = catalogue
        self.result_record: dict | None = None
        self.setWindowTitle("Add price quote")
        self.setMinimumWidth(460)
        layout = QVBoxLayout(self)
        intro = QLabel("A quote you received, kept as your own price observation with its supplier and date.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.item = QComboBox()
        self.item.setObjectName("quote_item")
        items = [r["id"] for r in catalogue.items("accelerators")] + [r["id"] for r in catalogue.items("systems")]
        self.item.addItems(sorted(items))
        if item_id:
            self.item.setCurrentIndex(max(0, self.item.findText(item_id)))
        self.price = QLineEdit()
        self.price.setObjectName("quote_price")
        self.price.setPlaceholderText("US dollars, e.g. 28500")
        self.when = QLineEdit(date.today().isoformat())
        self.when.setObjectName("quote_date")
        self.supplier = QLineEdit()
        self.supplier.setObjectName("quote_supplier")
        self.url = QLineEdit()
        self.url.setObjectName("quote_url")
        self.url.setPlaceholderText("https://… (optional)")
        self.notes = QLineEdit()
        form.addRow("Item", self.item)
        form.addRow("Price ($) *", self.price)
        form.addRow("Date", self.when)
        form.addRow("Supplier", self.supplier)
        form.addRow("Link", self.url)
        form.addRow("Notes", self.notes)
        layout.addLayout(form)
        self.message = add_message_and_buttons(self, layout)

    def accept(self) -> None:
        try:
            self.result_record = self.catalogue.add_price_quote(
                self.item.currentText(), self.price.text(), when=self.when.text().strip() or None,
                supplier=self.supplier.text(), url=self.url.text(), notes=self.notes.text(),
            )
        except EditError as exc:
            self.message.setText("Nothing was saved. " + "; ".join(exc.problems.values()))
            self.message.show()
            return
        super().accept()
