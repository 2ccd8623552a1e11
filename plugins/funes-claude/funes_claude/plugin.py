"""Hook implementations of funes-claude."""

from __future__ import annotations
