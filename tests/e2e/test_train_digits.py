"""The train_digits example, short: a few TinyJit training steps of the CNN on scikit-learn's
digits lower the loss and classify the test split far above chance. Kernels are built with
NOOPT=1 here: lowering the optimized training kernels takes minutes on a loaded machine,
the unoptimized ones seconds (the numbers are the same up to rounding)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from fusegrad import Context

pytest.importorskip("sklearn")

from fusegrad.examples import train_digits


def test_short_training_lowers_the_loss_and_beats_chance(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with Context(NOOPT=1):
        history = train_digits.train(epochs=1, max_steps=20, lr=0.01, quiet=True)
        assert train_digits.main(["--epochs", "1", "--steps", "2"]) == 0
    losses = history.step_losses
    assert len(losses) == 20 and all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.3, losses
    assert history.accuracies[-1] > 0.4, history.accuracies  # chance is 0.1
    out = capsys.readouterr().out
    assert "epoch   1  loss" in out and "final test accuracy" in out


def test_missing_scikit_learn_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(SystemExit, match="pip install scikit-learn"):
        train_digits.load_data()
