"""The decision graph: goals, decisions, options, actions and outcomes the agent logs,
why, and what came of them (seed 000). The thread files hold each session's entries
(`loom.core.decisions`); `index` joins them per project in `loom.db`; `context` puts the
project's graph in front of the model; `pulse`, `narrative` and `export` report it."""
