"""The thread file schema version, kept free of pydantic so start-up paths can read it."""

SCHEMA_VERSION = 1
"""The newest thread file schema this Loom reads and writes."""
