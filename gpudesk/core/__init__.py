"""gpudesk's model layer: catalogue, estimates, scenarios, importers, report content. No Qt here."""
