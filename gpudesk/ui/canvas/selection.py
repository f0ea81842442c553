"""The Cluster view's selection and captions: what the properties panel shows for the selected
node or link, and the captions the scene draws on nodes and links. A mixin of ClusterView: it
reads the view's graph, scene, catalogue and properties panel."""

from __future__ import annotations

from gpudesk.core.cluster.convert import node_caption
from gpudesk.core.cluster.model import Link, Node


class SelectionWiring:
    """Keeps ClusterView's properties panel on the selection, and captions the scene's items."""

    def _graph_changed(self, *_args) -> None:
        if self.graph.in_batch:
            return  # once, when the whole edit is done (a pasted fat tree is 70,000 events)
        self.schedule()
        self._refresh_properties()

    def _describe(self, node: Node) -> tuple[str, str]:
        if self.catalogue is None:
            return node.label or node.item, ""
        return node.label or node.item, node_caption(node, self.catalogue)

    def _link_info(self, link: Link) -> tuple[str, str]:
        row = self.catalogue.get("interconnects", link.kind) if self.catalogue else None
        name = (row or {}).get("name", link.kind)
        short = name.split(" (")[0]
        return (row or {}).get("family", "ethernet"), (f"{link.count} × {short}" if link.count > 1 else short)

    def _selection_changed(self) -> None:
        self._refresh_properties()

    def _refresh_properties(self) -> None:
        if self.catalogue is None:
            return
        try:
            nodes, links = self.scene.selected_ids()
        except RuntimeError:  # the scene is being torn down
            return
        if len(nodes) == 1 and not links and nodes[0] in self.graph.nodes:
            node = self.graph.nodes[nodes[0]]
            self.properties.show_node(node, node_caption(node, self.catalogue))
        elif len(links) == 1 and not nodes and links[0] in self.graph.links:
            link = self.graph.links[links[0]]
            a, b = self.graph.nodes[link.source], self.graph.nodes[link.target]
            self.properties.show_link(link, f"{a.label} ↔ {b.label}")
        else:
            self.properties.show_nothing()
