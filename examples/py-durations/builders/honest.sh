#!/bin/sh
# Demo builder: an honest agent. $1 is loopgate's {required_fix}: empty on attempt 1.
# Attempt 1 fixes "ms" and the empty-result case but still uses findall (no fractions, no
# validation of the whole string); once told that a gate failed, it applies the full fix.
required_fix=${1:-}
if [ -z "$required_fix" ]; then
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

_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+)(ms|[smhdw])")


def parse_duration(text):
    parts = _PART.findall(text.lower())
    if not parts:
        raise ValueError(f"invalid duration {text!r}")
    total = 0
    for number, unit in parts:
        total += int(number) * _UNIT_SECONDS[unit]
    return timedelta(seconds=total)
PY
  echo "Attempt 1: recognise 'ms' before 'm' and raise ValueError when nothing parses. Visible tests pass."
else
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
  echo "Attempt 2: after the required fix, parse the whole string part by part (fractions, whitespace) and reject anything else."
fi
exit 0
