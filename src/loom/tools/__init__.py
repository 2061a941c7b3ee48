"""Tools the agent calls: the Tool protocol, the registry, and the built-ins."""
