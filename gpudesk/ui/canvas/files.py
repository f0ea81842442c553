"""The Cluster view's file actions: new, open, save, autosave and recovery after a crash, and
export (PNG, SVG, PDF report). A mixin of ClusterView: it reads the view's graph, scene, undo
stack, catalogue and `base` scenario document."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gpudesk.core import paths
from gpudesk.core.cluster.convert import graph_for_scenario
from gpudesk.core.cluster.model import ClusterGraph
from gpudesk.core.fileio import atomic_write_text
from gpudesk.core.scenario import ScenarioError, load_scenario, save_scenario

log = logging.getLogger(__name__)

AUTOSAVE_NAME = "cluster-autosave.json"
MAX_EXPORT_PX = 8000  # longest side of an exported PNG


class FileActions:
    """New, open, save, autosave, recovery and export for ClusterView."""

    # ------------------------------------------------------------------ files
    def new_file(self) -> None:
        if not self.maybe_close():
            return
        self.path = None
        self.load_example()
        self.undo_stack.clear()
        self._sync_panel_choices()
        self.schedule()

    def open_file(self) -> None:
        if not self.maybe_close():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open cluster", str(self._folder()), "gpudesk scenarios (*.json)")
        if path:
            self.open_path(path)

    def open_path(self, path, as_copy: bool = False) -> bool:
        """Open a scenario file; `as_copy` opens it untitled (a report's saved scenario, say)."""
        try:
            scenario = load_scenario(path)
            graph_source = graph_for_scenario(scenario, self.catalogue)
        except (ScenarioError, ValueError) as exc:
            QMessageBox.warning(self, "Cannot open cluster", f"{path}: {exc}")
            return False
        from gpudesk.core.resolve import missing_entries

        missing = missing_entries(scenario, self.catalogue) if self.catalogue is not None else []
        if missing:  # a node the catalogue cannot price or time would leave every estimate blank, unexplained
            QMessageBox.warning(self, "Cannot open cluster", f"{path}:\n" + "\n".join(missing))
            return False
        self._load(scenario, graph_source)
        self.path = None if as_copy else Path(path)
        self.undo_stack.clear()
        if as_copy:
            self.undo_stack.resetClean()
            self.modified_changed.emit(True)
        else:
            self.undo_stack.setClean()
        self.status_message.emit(f"Opened {Path(path).name}")
        return True

    def _load(self, scenario, graph_source: ClusterGraph) -> None:
        self.base = {k: v for k, v in scenario.to_dict().items() if k not in ("cluster", "compare", "canvas")}
        if scenario.compare and not scenario.cluster:
            self.base["name"] = scenario.name
        self.graph.load_dict(graph_source.to_dict())
        self._sync_panel_choices()
        QTimer.singleShot(0, self.canvas.fit)
        self.schedule()

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, "Save cluster", str(self._folder() / "cluster.json"),
                                              "gpudesk scenarios (*.json)")
        return bool(path) and self._write(Path(path))

    def _write(self, path: Path) -> bool:
        try:
            save_scenario(self.current_scenario(), path)
        except (ScenarioError, OSError) as exc:
            QMessageBox.warning(self, "Not saved", f"{path}: {exc}")
            return False
        self.path = Path(path)
        self.undo_stack.setClean()
        self.modified_changed.emit(False)
        self.remove_autosave()
        self.status_message.emit(f"Saved {Path(path).name}")
        return True

    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    def document_title(self) -> str:
        return self.path.name if self.path else ""

    def maybe_close(self) -> bool:
        if not self.is_modified():
            self.remove_autosave()
            return True
        answer = QMessageBox.question(
            self, "Unsaved cluster", "The cluster has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        if answer == QMessageBox.StandardButton.Discard:
            self.remove_autosave()
            return True
        return False

    def _folder(self) -> Path:
        return self.path.parent if self.path else Path.home()

    # ------------------------------------------------------------------ autosave and recovery
    @staticmethod
    def autosave_path() -> Path:
        return paths.autosave_dir() / AUTOSAVE_NAME

    def autosave(self) -> bool:
        if self.catalogue is None or not self.is_modified():
            return False
        try:
            payload = json.loads(self.current_scenario().to_json())
            payload["notes"] = json.dumps({"autosaved_from": str(self.path) if self.path else "",
                                           "autosaved_at": time.strftime("%Y-%m-%d %H:%M:%S")})
            atomic_write_text(self.autosave_path(), json.dumps(payload))  # compact: the C encoder, 10x faster at 60,000 links
            return True
        except (ScenarioError, OSError) as exc:
            log.warning("autosave failed: %s", exc)
            return False

    def remove_autosave(self) -> None:
        try:
            self.autosave_path().unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("cannot remove the autosave: %s", exc)

    def check_recovery(self) -> bool:
        """After a crash: offer the autosaved cluster. Returns True when it was restored."""
        path = self.autosave_path()
        if not path.exists():
            return False
        try:
            scenario = load_scenario(path)
            graph_source = graph_for_scenario(scenario, self.catalogue)
            meta = json.loads(scenario.notes or "{}")
        except (ScenarioError, ValueError):
            log.warning("the autosaved cluster cannot be read; it is kept at %s", path)
            return False
        if not self.ask_recover(meta.get("autosaved_at", "")):
            self.remove_autosave()
            return False
        self._load(scenario, graph_source)
        self.base.pop("notes", None)
        self.path = Path(meta["autosaved_from"]) if meta.get("autosaved_from") else None
        self.undo_stack.clear()
        self.undo_stack.resetClean()  # recovered work is unsaved work
        self.modified_changed.emit(True)
        self.status_message.emit("Recovered the cluster you had not saved")
        return True

    def _ask_recover(self, when: str) -> bool:
        answer = QMessageBox.question(self, "Recover unsaved cluster",
                                      f"gpudesk closed before a cluster was saved (autosaved {when or 'recently'}). "
                                      "Recover it?")
        return answer == QMessageBox.StandardButton.Yes

    # ------------------------------------------------------------------ export
    def render_image(self, fmt: str, path: str | Path) -> Path:
        """The whole canvas at full detail (never the zoomed-out overview), written atomically.
        A PNG is drawn at twice the scene's size, capped at MAX_EXPORT_PX on its longer side."""
        from gpudesk.ui.canvas.items import Ink

        overview = self.scene.overview.isVisible()
        self.scene.set_overview(False)
        try:
            with Ink.printing():  # on paper colours, also under a dark screen palette
                self.scene.recolour()
                return self._render_image(fmt, Path(path))
        finally:
            self.scene.recolour()
            self.scene.set_overview(overview)

    def _render_image(self, fmt: str, path: Path) -> Path:
        rect = self.scene.itemsBoundingRect().adjusted(-30, -30, 30, 30)
        if fmt == "svg":
            from PySide6.QtSvg import QSvgGenerator

            generator = QSvgGenerator()
            tmp = path.with_name(f".{path.name}.tmp")
            generator.setFileName(str(tmp))
            generator.setSize(rect.size().toSize())
            generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
            generator.setTitle(self.base.get("name") or "gpudesk cluster")
            painter = QPainter(generator)
            self.scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
            painter.end()
            tmp.replace(path)
        else:
            scale = min(2.0, MAX_EXPORT_PX / max(rect.width(), rect.height(), 1.0))
            image = QImage((rect.size() * scale).toSize(), QImage.Format.Format_ARGB32)
            image.fill(Qt.GlobalColor.white)
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.scene.render(painter, QRectF(image.rect()), rect)
            painter.end()
            tmp = path.with_name(f".{path.name}.tmp.png")
            if not image.save(str(tmp), "PNG"):
                tmp.unlink(missing_ok=True)
                raise OSError(f"could not write {path}")
            tmp.replace(path)
        return path

    def export_image(self, fmt: str = "png", path: str | None = None) -> Path | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, f"Export {fmt.upper()}", str(self._folder() / f"cluster.{fmt}"),
                                                  f"{fmt.upper()} (*.{fmt})")
            if not path:
                return None
        self.scene.clearSelection()
        written = self.render_image(fmt, path)
        self.status_message.emit(f"Wrote {written}")
        return written

    def export_pdf(self, path: str | None = None) -> Path | None:
        """A procurement report of this cluster: the drawing, the estimates, assumptions and sources."""
        if self.catalogue is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "PDF report", str(self._folder() / "cluster.pdf"), "PDF (*.pdf)")
            if not path:
                return None
        import tempfile

        from gpudesk.core.compare import build_comparison
        from gpudesk.core.report.content import Figure, Section, comparison_report
        from gpudesk.core.settings import load_settings
        from gpudesk.ui.render.pdf import render_report_pdf

        settings = load_settings()
        scenario = self.current_scenario()
        scenario.report = dict(scenario.report or {}, question=(scenario.report or {}).get("question")
                               or f"Cluster design: {scenario.name or 'my cluster'}")
        comparison = build_comparison(scenario, self.catalogue, settings)
        report = comparison_report(comparison, settings.author, settings.organisation)
        report.title = "Cluster design report"
        with tempfile.TemporaryDirectory() as folder:
            self.scene.clearSelection()
            svg = self.render_image("svg", Path(folder) / "cluster.svg")
            report.sections.insert(0, Section("The cluster", [Figure(str(svg), "The cluster as drawn in gpudesk.")]))
            written = render_report_pdf(report, path, settings.page_size)
        from gpudesk.core.report.history import try_record_comparison

        problem = try_record_comparison(comparison, written, title=report.title, kind="cluster",
                                        page_size=settings.page_size)
        self.status_message.emit(f"Wrote {written}" + (f"; not added to Reports: {problem}" if problem else ""))
        return written
