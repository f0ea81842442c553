"""Drawing shared by the views and the CLI: vector charts and the PDF report (not a view)."""
