"""The chat tab: pane, message view, controller and thread ops."""
