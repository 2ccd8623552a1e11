"""Sample Codex rollouts, their golden turns and a realistic Codex config (contract-suite fixtures).

Shipped inside the package so ``funes integrations check codex`` can run the golden tests on an
installed funes-codex, not only in this repository's tests.
"""
