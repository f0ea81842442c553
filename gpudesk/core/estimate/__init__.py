"""gpudesk.core.estimate"""
