"""Configuration: one YAML file for offline scoring and the live service."""

from tracescore.config.model import Config, Scenario, ScenarioMatch

__all__ = ["Config", "Scenario", "ScenarioMatch"]
