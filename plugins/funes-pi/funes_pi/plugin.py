"""Hook implementations of funes-pi."""

from __future__ import annotations
