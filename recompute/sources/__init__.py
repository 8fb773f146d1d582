"""Where recompute gets outside data from (beacon nodes: :mod:`recompute.sources.beacon`)."""
