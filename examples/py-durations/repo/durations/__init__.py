"""Parse human-written durations such as ``"1h30m"`` or ``"250ms"``."""

from .parser import parse_duration

__all__ = ["parse_duration"]
