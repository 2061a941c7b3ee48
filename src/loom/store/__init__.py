"""Local thread storage: JSON files (the truth), the SQLite index, locks, sync."""
