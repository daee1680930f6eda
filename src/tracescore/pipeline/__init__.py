"""The live service of `tracescore serve`: wiring, lifecycle and start-up checks."""

from tracescore.pipeline.preflight import ServeSecrets, preflight
from tracescore.pipeline.service import Pipeline

__all__ = ["Pipeline", "ServeSecrets", "preflight"]
