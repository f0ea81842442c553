"""The Reports view package."""
