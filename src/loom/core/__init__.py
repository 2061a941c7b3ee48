"""Pure domain: ids, messages, the thread model, the agent state machine. No I/O here."""
