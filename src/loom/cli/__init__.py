"""The command line: a Typer app, one module per command group (see `loom.cli.app`)."""
