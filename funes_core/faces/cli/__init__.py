"""The ``funes`` command line: ``app`` builds the typer app; one module per group of commands."""
