"""Versions of the fusegrad distributions, and the check that an installed set fits together.

Each fusegrad package takes its ``__version__`` from its installed metadata and, when
imported, checks that the other fusegrad distributions it requires are installed at versions
inside the ranges its metadata declares (the range it was tested with). A mismatched set,
say ``fusegrad`` 0.2 over ``fusegrad-uop`` 0.1, raises one ``ImportError`` that names both
versions and the ``pip install`` that fixes it, instead of an ``AttributeError`` from deep
inside whichever module first meets the difference.

The specifier check covers what the packages declare: comma-separated clauses of ``==``
(with a trailing ``.*``), ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``~=`` and ``===`` over the
release numbers of a version (pre-, post- and dev-release parts and local labels are
ignored).
"""

from __future__ import annotations

import re
from importlib import metadata

UNKNOWN = "0+unknown"  # the version of a source tree imported without installed metadata

_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*"
    r"\(?(?P<spec>[^;)]*)\)?\s*(?:;(?P<marker>.*))?$"
)
_CLAUSE = re.compile(r"^\s*(?P<op>===|~=|==|!=|<=|>=|<|>)\s*(?P<version>[^\s,]+)\s*$")
_RELEASE = re.compile(r"^\s*v?(?:\d+!)?(?P<release>\d+(?:\.\d+)*)")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def release(version: str) -> tuple[int, ...]:
    """The release numbers of ``version``: ``release("0.2.1rc1") == (0, 2, 1)``.

    >>> release("1.26.4"), release("0+unknown")
    ((1, 26, 4), (0,))
    """
    found = _RELEASE.match(version)
    if found is None:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in found["release"].split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def _clause_holds(version: str, op: str, bound: str) -> bool:
    if op == "===":
        return version == bound
    if bound.endswith(".*") and op in ("==", "!="):
        prefix = release(bound[:-2])
        same = release(version)[: len(prefix)] == prefix
        return same if op == "==" else not same
    have, want = _padded(release(version), release(bound))
    if op == "~=":
        stem = release(bound)[:-1]
        return have >= want and release(version)[: len(stem)] == stem
    return {
        "==": have == want,
        "!=": have != want,
        "<": have < want,
        "<=": have <= want,
        ">": have > want,
        ">=": have >= want,
    }[op]


def satisfies(version: str, specifier: str) -> bool:
    """Whether ``version`` lies in ``specifier`` (comma-separated clauses, all must hold).

    >>> satisfies("0.1.3", ">=0.1.0,<0.2"), satisfies("0.2.0", "~=0.1.0"), satisfies("1.0", "")
    (True, False, True)
    """
    clauses = [c for c in specifier.split(",") if c.strip()]
    for clause in clauses:
        found = _CLAUSE.match(clause)
        if found is None:
            raise ValueError(f"unsupported version specifier clause {clause!r} in {specifier!r}")
        if not _clause_holds(version, found["op"], found["version"]):
            return False
    return True


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution``; ``UNKNOWN`` when it has no metadata."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def fusegrad_requirements(distribution: str) -> list[tuple[str, str]]:
    """``(name, specifier)`` of each fusegrad distribution ``distribution`` requires.

    Requirements under an environment marker (extras, platforms) are left out: they are not
    needed for the package to import.
    """
    try:
        lines = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    found = []
    for line in lines:
        parsed = _REQUIREMENT.match(line)
        if parsed is None or parsed["marker"]:
            continue
        name = _normalize(parsed["name"])
        if name == "fusegrad" or name.startswith("fusegrad-"):
            found.append((name, parsed["spec"].strip()))
    return found


def check_requirements(distribution: str) -> str:
    """Return the installed version of ``distribution`` after checking its fusegrad requirements.

    Raises one ``ImportError`` naming every installed fusegrad distribution whose version is
    outside the range ``distribution`` declares, with both versions and the fix. A requirement
    that is not installed at all is left to the import that needs it (it fails with
    ``ModuleNotFoundError`` naming the module); a source tree without metadata is not checked.
    """
    version = distribution_version(distribution)
    if version == UNKNOWN:
        return version
    wrong = []
    for name, specifier in fusegrad_requirements(distribution):
        installed = distribution_version(name)
        if installed != UNKNOWN and not satisfies(installed, specifier):
            wrong.append((name, specifier, installed))
    if wrong:
        needs = "; ".join(
            f"it needs {name}{spec} but {name} {have} is installed" for name, spec, have in wrong
        )
        fix = " ".join(f"'{name}{spec}'" for name, spec, _ in wrong)
        raise ImportError(
            f"mismatched fusegrad packages: {distribution} {version} is installed and {needs}. "
            f"Fix: pip install {fix} (or upgrade the whole set together: "
            f"pip install -U fusegrad fusegrad-runtime fusegrad-renderers fusegrad-codegen "
            f"fusegrad-uop)"
        )
    return version


__version__ = check_requirements("fusegrad-uop")
