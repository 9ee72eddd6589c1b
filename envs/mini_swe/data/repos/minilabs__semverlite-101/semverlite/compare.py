"""Ordering of versions."""

from semverlite.version import parse


def _key(version):
    # A release sorts after its pre-releases.
    core = str(version).split("-")[0].split(".")
    return (*core, not version.prerelease, version.prerelease)


def compare(a, b):
    """-1, 0 or 1 as version a is older than, equal to or newer than b."""
    ka, kb = _key(parse(a)), _key(parse(b))
    return (ka > kb) - (ka < kb)


def sort_versions(versions):
    """The versions, parsed and sorted oldest first."""
    return sorted((parse(v) for v in versions), key=_key)


def max_version(versions):
    """The newest of the versions."""
    return max((parse(v) for v in versions), key=_key)
