"""gpudesk.core.benchmarks"""
