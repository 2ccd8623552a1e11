"""The turns format: the one input the core reads.

:mod:`~funes_core.turns.format` holds the model (``Turn``, ``Block``), the strict line parser,
the file reader and the atomic writer; ``turns.schema.json`` beside it is the published JSON
Schema that plugins and third parties validate against (shipped as package data).
"""
