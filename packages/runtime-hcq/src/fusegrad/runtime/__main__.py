"""``python -m fusegrad.runtime``: the devices and renderers available here, and why any
is not."""

from __future__ import annotations

from fusegrad.runtime.listing import device_report


def main() -> None:
    """Print every device kind with its renderers."""
    print("\n".join(device_report()))


if __name__ == "__main__":
    main()
