"""The cluster canvas's model: the graph of nodes and links, undoable commands, and conversions to
the scenario the estimation engine reads. No Qt."""

from gpudesk.core.cluster.commands import (
    AddItems,
    Command,
    Macro,
    MoveNodes,
    RemoveItems,
    SetCountUnlinked,
    SetLink,
    SetNode,
    UndoStack,
)
from gpudesk.core.cluster.model import ClusterGraph, Link, Node

__all__ = ["AddItems", "ClusterGraph", "Command", "Link", "Macro", "MoveNodes", "Node", "RemoveItems", "SetCountUnlinked", "SetLink",
           "SetNode", "UndoStack"]
