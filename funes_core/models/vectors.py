"""What identifies an embedding and the model that made it: :data:`Vector`, :class:`ModelStamp`.

They sit with the models, not the store: an embedder hands vectors out and stamps what it is; a
store only keeps both. The store, the read verbs and the model plugins all import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["ModelMismatchError", "ModelStamp", "Vector"]

#: An embedding: float32, L2-normalised, of the stamped dimension. A store may keep it at half
#: precision on disk (the LanceDB store does); it always hands float32 back.
Vector = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ModelStamp:
    """Which embedding model built a memory. Mixing vectors of two models would rank garbage."""

    model: str
    dim: int


class ModelMismatchError(RuntimeError):
    """The memory was built with another embedding model than this funes uses."""

    def __init__(self, label: str, stored: ModelStamp, ours: ModelStamp) -> None:
        self.label = label
        self.stored = stored
        self.ours = ours
        # The dimension is named only when the model names alone would read as identical.
        theirs, mine = stored.model, ours.model
        if theirs == mine:
            theirs, mine = f"{theirs} ({stored.dim}-d)", f"{mine} ({ours.dim}-d)"
        super().__init__(
            f"memory {label} was built with {theirs}; this funes embeds with {mine}. "
            "Rebuild it with: funes index --rebuild"
        )
