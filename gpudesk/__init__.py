"""gpudesk: choose AI compute and defend the choice. The one place that names the app and its version."""

__version__ = "0.1.0"
APP_NAME = "gpudesk"
APP_DISPLAY_NAME = "gpudesk"
ORG_NAME = "gpudesk"
ORG_DOMAIN = "gpudesk.invalid"
APP_DESCRIPTION = "Decision support for choosing AI compute: catalogue, comparison, cluster estimates, reports."
