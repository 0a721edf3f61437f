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

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+)([smhdw])")


def parse_duration(text):
    total = 0
    for number, unit in _PART.findall(text.lower()):
        total += int(number) * _UNIT_SECONDS[unit]
    return timedelta(seconds=total)
