"""gpudesk.core.report"""
