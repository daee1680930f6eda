"""Deterministic scorers: `base.ScorerBase` and one module per family; the registry of every
scorer type (judges too) is `tracescore.config.scorers`."""
