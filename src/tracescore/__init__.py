"""tracescore: score AI agents' tool calls and trajectories from their OpenTelemetry traces."""

__version__ = "0.1.0"

__all__ = ["__version__"]
