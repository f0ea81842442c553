"""gpudesk.core.cluster"""
