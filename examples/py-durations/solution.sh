#!/bin/sh
# Reference fix: match the whole input part by part (so stray text is an error), accept
# fractions, and try "ms" before "m".
set -eu
cat > durations/parser.py <<'PY'
"""Duration parsing.

parse_duration(text) -> datetime.timedelta

Grammar: one or more parts ``<number><unit>``, optionally separated by whitespace, with
optional leading and trailing whitespace.

* number: decimal digits with an optional fraction: ``1``, ``1.5``, ``0.25``
* unit:   ``ms`` (milliseconds), ``s``, ``m`` (minutes), ``h``, ``d``, ``w`` (weeks);
          case-insensitive

Parts are added up: ``"1h30m"`` and ``"1h 30m"`` are both 90 minutes.

Anything else -- empty or blank text, a number without a unit, an unknown unit, a sign,
stray characters between or after parts -- raises ``ValueError``.
"""

import re
from datetime import timedelta

_UNITS = {"ms": "milliseconds", "s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)(ms|s|m|h|d|w)", re.IGNORECASE)


def parse_duration(text):
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty duration")
    total = timedelta(0)
    pos = 0
    while pos < len(stripped):
        match = _PART.match(stripped, pos)
        if match is None:
            raise ValueError(f"invalid duration {text!r} at position {pos}")
        number, unit = match.groups()
        total += timedelta(**{_UNITS[unit.lower()]: float(number)})
        pos = match.end()
    return total
PY
