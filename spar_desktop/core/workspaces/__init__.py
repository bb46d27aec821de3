"""SPAR's session layer: requests become explained tag+metadata filters; per-workspace collections."""
