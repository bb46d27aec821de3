"""The Relations tab: the graph view and its pyqtgraph items, relation ops, live updates, and RelationsFeatures, which wires the tab into the main window."""
