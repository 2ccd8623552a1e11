"""Hook implementations of funes-codex."""

from __future__ import annotations
