"""The Version type and its parser."""

import re
from dataclasses import dataclass

_PATTERN = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?")


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: str = ""

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{self.prerelease}" if self.prerelease else core


def parse(text):
    """Parse "1.2.3" or "v1.2.3-rc1" into a Version."""
    if isinstance(text, Version):
        return text
    match = _PATTERN.fullmatch(text.strip().removeprefix("v"))
    if match is None:
        raise ValueError(f"not a version: {text!r}")
    major, minor, patch, pre = match.groups()
    return Version(int(major), int(minor), int(patch), pre or "")
