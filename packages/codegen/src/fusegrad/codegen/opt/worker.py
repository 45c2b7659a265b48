"""A BEAM build worker (``parallel.WorkerPool`` starts it with ``parallel.worker_command``;
``python -m fusegrad.codegen.opt.worker`` runs one too). Reads the parent's ``sys.path``,
then pickled ``Job``s from stdin, and answers each with a pickled ``Build`` on stdout; stops
at end of input. Anything the build prints goes to stderr, so it cannot corrupt them."""

from __future__ import annotations

import pickle
import sys


def main() -> None:
    """Serve jobs until stdin closes."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    from fusegrad.codegen.opt import parallel

    for entry in parallel.receive(requests):
        if entry not in sys.path:
            sys.path.append(entry)
    while True:
        try:
            data = parallel.receive_bytes(requests)
        except EOFError:
            return
        try:
            job = pickle.loads(data)
        except Exception:  # a class only the parent can import: it builds the job itself
            parallel.send(answers, None)
            continue
        parallel.send(answers, parallel.build_in_worker(job))


if __name__ == "__main__":
    main()
