"""LLM providers behind one streaming Provider protocol (see `loom.llm.base`)."""
