"""The thread file schema version, kept free of pydantic so start-up paths can read it."""

SCHEMA_VERSION = 2
"""The newest thread file schema this Loom reads and writes.

1: the first release. 2: `decision_graph` (nodes, edges and node changes the session
logged); a version 1 file loads with an empty graph."""
