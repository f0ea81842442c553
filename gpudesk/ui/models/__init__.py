"""gpudesk.ui.models"""
