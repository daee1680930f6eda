"""Write-ahead storage for what `tracescore serve` holds (the `storage:` section)."""

from tracescore.storage.config import StorageSettings
from tracescore.storage.journal import Journal, Key, Recovered, Token

__all__ = ["Journal", "Key", "Recovered", "StorageSettings", "Token"]
