"""Which funes this is: the distribution names and its version, written in one place.

``__version__`` here is the one place the core's version is written: hatch reads it for the
build (``[tool.hatch.version]``), every plugin's ``funes-memory>=X,<Y`` range is checked against
it when the plugin loads, and what the index engine and the plugin host stamp comes from it. It
lives below every room (nothing here imports funes_core), so those rooms never reach up to the
package's public API for it.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "KIT_DISTRIBUTION", "__version__"]

__version__ = "0.1.0"

#: The distribution that ships this package (what ``pip install`` takes).
DISTRIBUTION = "funes-memory"
#: The distribution of the plugin contract kit (``funes_contracts``).
KIT_DISTRIBUTION = "funes-memory-contracts"
