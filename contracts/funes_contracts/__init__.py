"""funes-contracts: the conformance suite that funes plugins (and funes' own stores) run."""

from __future__ import annotations

CONTRACT_VERSION = 1

__all__ = ["CONTRACT_VERSION"]
