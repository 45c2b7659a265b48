"""Settings for the whole suite: property tests (hypothesis) have no time limit and no
too-slow health check, because the machines are shared and noisy (speed is measured in
tools/bench, never in tests); under CI they draw the same examples on every run, so a
submission's result does not depend on the draw."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fusegrad",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
)
settings.load_profile("fusegrad")
