#!/bin/sh
# Demo builder: claims success without doing the work.
printf '\n# NOTE: milliseconds and validation handled.\n' >> durations/parser.py
echo "Fixed! parse_duration() now handles ms and rejects invalid input. All tests pass."
exit 0
