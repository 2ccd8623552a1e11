"""Models: the packaged embedder (``embed``); rerankers will live here too.

Everything here loads lazily: importing this package costs nothing until a model is used.
"""
