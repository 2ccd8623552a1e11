"""funes integration for Hermes."""

from __future__ import annotations
