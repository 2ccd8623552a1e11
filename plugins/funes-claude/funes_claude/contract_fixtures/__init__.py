"""Sample Claude Code sessions and configs for the funes contract suite (see docs/plugins/testing.md)."""
