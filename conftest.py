"""Settings for every test of the workspace: ``tests/``, ``contracts/tests`` and ``plugins/*/tests``.

Hypothesis runs without a deadline and without its too-slow health check. Both measure time:
the deadline fails an example that takes longer than 200 ms, the health check fails a test
whose data is slow to generate. Neither is what any test here is about (round trips, fuzzed
configs and frames), and both fail on a loaded machine (the shared development machine runs
at a load of 10-25 on 2 cores: a 355 ms round trip failed ``test_strategies``). Timing goals
belong in ``bench/`` (docs/benchmarks.md), where a figure is read beside the load it ran under.
``HYPOTHESIS_PROFILE=default`` brings hypothesis' own settings back, to look for slow examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("funes", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "funes"))
