"""Rebuild agent trajectories from spans (every instrumentation convention)."""
