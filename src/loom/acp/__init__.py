"""The ACP face: `loom acp` runs Loom as an Agent Client Protocol agent over stdio."""
