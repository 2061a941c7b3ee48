"""Loom: a local-first AI coding assistant.

Kept tiny on purpose: `loom --version` imports only this module.
"""

__version__ = "0.1.0"
