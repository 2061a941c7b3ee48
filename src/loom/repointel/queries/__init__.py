"""Tags queries of our own, appended to the grammar wheels' (see languages.py)."""
