"""CLI verbs, one module per group, each exposing ``register(app)``."""
