"""Configuration: one YAML file for offline scoring and the live service.

`load_config(path)` reads and validates it; a `ConfigError` lists every problem at once, each
as `<file>:<line>: <yaml path>: <message>`.
"""

from tracescore.config._loader import load_config, parse_config
from tracescore.config.model import Config, Scenario, ScenarioMatch

__all__ = ["Config", "Scenario", "ScenarioMatch", "load_config", "parse_config"]
