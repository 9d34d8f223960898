"""The tiers: ingest into the hot tier, spill into the graph, promotion back, removal,
maintenance, per-session settings, admission, reports and listings."""
