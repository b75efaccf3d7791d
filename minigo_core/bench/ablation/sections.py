"""A spec's settings sections (`rating:`, `measures:`): the checks every section shares.

`section_values` refuses a section that is not a mapping or names a key its settings class does not have,
and gives the section merged over the class's defaults; `integer` refuses a value that is not an integer
(bools are not) at least `least`. Each names the spec (`where`) and the key as `section.key`, and exits
(SystemExit), as every check of a spec does before its rows' hours begin.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


def section_values(section: object, name: str, cls: type, where: str) -> dict[str, Any]:
    """`section` (the spec's `name:`) merged over `cls()`'s defaults; SystemExit for a non-mapping or a key
    `cls` does not have."""
    fields = list(cls.__dataclass_fields__)
    if not isinstance(section, dict):
        raise SystemExit(f"{where}: `{name}` must be a mapping ({', '.join(fields)})")
    unknown = sorted(set(section) - set(fields))
    if unknown:
        raise SystemExit(f"{where}: unknown key(s) {name}.{f', {name}.'.join(unknown)}")
    return {**asdict(cls()), **section}


def integer(values: dict, key: str, least: int, name: str, where: str) -> int:
    """`values[key]`, an integer >= `least`; SystemExit naming `name.key` otherwise."""
    value = values[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise SystemExit(f"{where}: {name}.{key} must be an integer >= {least}, got {value!r}")
    return value
