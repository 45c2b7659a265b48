"""The device list: every device kind with its renderers, and why any is unavailable."""

from __future__ import annotations

from fusegrad.runtime.device import Device


def _describe(kind: str) -> list[str]:
    if kind == "DISK":
        return [f"{kind:<8s} available   files as buffers: DISK:/path/to/file"]
    try:
        dev = Device[kind]
    except Exception as e:
        return [f"{kind:<8s} unavailable: {type(e).__name__}: {e}"]
    status = dev.compiler_status()
    if not status:
        return [f"{kind:<8s} available   (runs no programs)"]
    ok = any(s == "ok" for _, s in status)
    lines = [f"{kind:<8s} {'available  ' if ok else 'unavailable'} {type(dev).__name__}"]
    lines += [f"    renderer {name:<6s} {s}" for name, s in status]
    return lines


def device_report() -> list[str]:
    """One line per device kind (and per renderer under it), then the default device."""
    lines = [line for kind in Device.kinds() for line in _describe(kind)]
    return [*lines, f"default: {Device.DEFAULT}"]
