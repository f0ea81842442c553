"""The Cluster view package."""
