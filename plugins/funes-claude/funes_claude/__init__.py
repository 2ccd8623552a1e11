"""funes integration for Claude Code."""

from __future__ import annotations
