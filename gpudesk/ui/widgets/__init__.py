"""gpudesk.ui.widgets"""
