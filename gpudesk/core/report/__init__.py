"""Report content (sections, tables, chart series); the PDF renderer lives in gpudesk.ui.render."""

from gpudesk.core.report.content import Report, comparison_report

__all__ = ["Report", "comparison_report"]
