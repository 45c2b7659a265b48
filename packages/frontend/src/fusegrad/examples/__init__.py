"""Runnable examples: ``python -m fusegrad.examples.embed "a sentence" ...``."""
