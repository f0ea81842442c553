"""The estimation engine: pure functions on plain dataclasses (no catalogue, no database, no Qt)."""

from gpudesk.core.estimate.engine import EstimateError, estimate, merge_groups
from gpudesk.core.estimate.types import (
    Band,
    Calibration,
    CloudOffer,
    Cost,
    Device,
    Estimate,
    EstimateInput,
    Finance,
    Link,
    MemoryFit,
    NodeGroup,
    Range,
    Site,
    Workload,
)

__all__ = [
    "Band", "Calibration", "CloudOffer", "Cost", "Device", "Estimate", "EstimateError", "EstimateInput",
    "Finance", "Link", "MemoryFit", "NodeGroup", "Range", "Site", "Workload", "estimate", "merge_groups",
]
