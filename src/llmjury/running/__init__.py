"""Running calls: the engine, its settings, cache and store hand-off, limits, budget, freshness."""
