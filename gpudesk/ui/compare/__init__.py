"""The Compare view package."""
