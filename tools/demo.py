"""The main job of fusegrad: a PLACEHOLDER until the main-job issue lands.

The main job will compute sentence embeddings with MiniLM on fusegrad. Until that issue
lands this script only shows what is installed and what already works:

1. the installed fusegrad distributions and their versions,
2. the devices fusegrad.runtime can see, once it has a device registry,
3. index simplification with fusegrad.uop, once ``UOp`` exists.

Run it with ``tools/dev demo``. Every part is guarded: a layer that is not written yet is
reported as such, and the script still exits 0.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from collections.abc import Callable
from typing import Any

# (expression as written, how to build it from the variable i in [0, 15])
INDEX_EXAMPLES: list[tuple[str, Callable[[Any], Any]]] = [
    ("(i * 4 + 3) // 4", lambda i: (i * 4 + 3) // 4),
    ("(i + 16) % 16", lambda i: (i + 16) % 16),
    ("i // 16", lambda i: i // 16),
]


def banner() -> None:
    print("fusegrad demo: PLACEHOLDER")
    print("  The main job (sentence embeddings with MiniLM) is not written yet; this script")
    print("  is a placeholder until the main-job issue lands. It shows what works so far.")
    print()


def install_kind(distribution: importlib.metadata.Distribution) -> str:
    """'editable <folder>', 'from <folder>' or 'wheel', read from PEP 610 direct_url.json."""
    text = distribution.read_text("direct_url.json")
    if not text:
        return "wheel"
    origin = json.loads(text)
    url = str(origin.get("url", "")).removeprefix("file://")
    editable = origin.get("dir_info", {}).get("editable", False)
    return f"editable {url}" if editable else f"from {url}"


def show_distributions() -> None:
    print("Installed fusegrad distributions:")
    found = {
        str(d.metadata["Name"]): d
        for d in importlib.metadata.distributions()
        if str(d.metadata["Name"]).startswith("fusegrad")
    }
    if not found:
        print("  none (run tools/dev env)")
    for name in sorted(found):
        distribution = found[name]
        print(f"  {name:<20} {distribution.version:<10} {install_kind(distribution)}")
    print()


def show_devices() -> None:
    print("Devices (fusegrad.runtime):")
    try:
        registry = importlib.import_module("fusegrad.runtime").Device
        list_kinds = getattr(registry, "kinds", None) or registry.get_available_devices
    except (ImportError, AttributeError):
        print("  not available yet: fusegrad.runtime has no device registry")
        print()
        return
    try:
        kinds = list(list_kinds())
        default = str(registry.DEFAULT)
    except Exception as error:  # a placeholder must not fail; say what went wrong
        print(f"  listing devices failed: {type(error).__name__}: {error}")
    else:
        print(f"  kinds: {', '.join(kinds) if kinds else 'none'}; default: {default}")
    print()


def show_index_simplification() -> None:
    print("Index simplification (fusegrad.uop), i in [0, 15]:")
    try:
        uop = importlib.import_module("fusegrad.uop")
        i = uop.UOp.variable("i", 0, 15)
        results = [(text, build(i).simplify().render()) for text, build in INDEX_EXAMPLES]
    except (ImportError, AttributeError):
        print("  not available yet: fusegrad.uop has no UOp.variable/simplify/render")
        print()
        return
    except Exception as error:  # a placeholder must not fail; say what went wrong
        print(f"  the example failed: {type(error).__name__}: {error}")
        print()
        return
    width = max(len(text) for text, _ in results)
    for text, simplified in results:
        print(f"  {text:<{width}}  ->  {simplified}")
    print()


def main() -> int:
    banner()
    show_distributions()
    show_devices()
    show_index_simplification()
    print("placeholder done: the real demo arrives with the main-job issue.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
