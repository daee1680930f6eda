"""Write-ahead storage for what `tracescore serve` holds (the `storage:` section)."""

# The config package first: its model imports this package's config, which imports
# config.serve; entered from here instead, the two would meet half-initialized.
import tracescore.config  # noqa: F401
from tracescore.config.storage import StorageSettings
from tracescore.storage.journal import Journal, Key, Recovered, Token

__all__ = ["Journal", "Key", "Recovered", "StorageSettings", "Token"]
