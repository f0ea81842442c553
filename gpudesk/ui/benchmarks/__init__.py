"""The Benchmarks view package."""
