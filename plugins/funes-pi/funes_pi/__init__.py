"""funes integration for pi."""

from __future__ import annotations
