"""Hook implementations of funes-hermes."""

from __future__ import annotations
