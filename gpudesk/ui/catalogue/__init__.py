"""gpudesk.ui.catalogue"""
