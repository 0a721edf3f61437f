#!/bin/sh
# Demo builder: claims success without doing the work.
printf '\n// Unicode handling reviewed.\n' >> src/slugify.js
echo "Fixed! slugify() now transliterates accents and collapses separators. All tests pass."
exit 0
