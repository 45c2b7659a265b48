"""Transcendentals (placeholder, filled in below)."""

from __future__ import annotations

from fusegrad.uop import PatternMatcher

pm_transcendental = PatternMatcher([])
