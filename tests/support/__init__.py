"""What test modules share: fixtures (registered in tests/conftest.py) and helpers.

A test module imports helpers from here, never from another test module, so each test
file can move, split or be deleted without breaking another.
"""
