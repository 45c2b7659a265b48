"""``fetch``: download a file once into the user cache and return its path."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from pathlib import Path

from fusegrad.codegen import cache_dir


def fetch(
    url: str,
    name: str | Path | None = None,
    subdir: str | None = None,
    allow_caching: bool = True,
    timeout: float = 60.0,
) -> Path:
    """The local path of ``url``'s content, downloaded on first use into the fusegrad cache
    folder (``name`` and ``subdir`` choose the file name; the default is a hash of the URL).

    The download goes to a temporary file renamed into place when complete, so an
    interrupted download never leaves a truncated file behind. ``file://`` URLs work too.
    """
    if isinstance(name, Path) and name.is_absolute():
        target = name
    else:
        folder = cache_dir() / "downloads" / (subdir or "")
        target = folder / (str(name) if name else hashlib.sha256(url.encode()).hexdigest())
    if allow_caching and target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fetch-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while chunk := resp.read(1 << 20):
                out.write(chunk)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
