"""funes integration for Codex CLI."""

from __future__ import annotations
