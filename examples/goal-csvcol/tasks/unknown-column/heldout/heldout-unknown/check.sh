#!/bin/sh
# Held-out checks for column selection errors: exit 2 with a message on stderr. Run from the repository root.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heldout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
# check NAME WANT_STATUS STDIN COLUMN: the status must match, and a failure must say something on stderr
check() {
  n=$((n + 1))
  status=0
  printf '%b' "$3" | sh bin/csvcol "$4" > "$tmp/out" 2> "$tmp/err" || status=$?
  if [ "$status" -eq "$2" ] && { [ "$2" -eq 0 ] || [ -s "$tmp/err" ]; }; then echo "ok $n - $1"
  else failed=$((failed + 1)); echo "not ok $n - $1 (exit $status, want $2)"; fi
}
check "unknown column name" 2 'id,label\n1,one\n' nope
check "column number out of range" 2 'id,label\n1,one\n' 3
check "column number zero" 2 'id,label\n1,one\n' 0
check "a known column still works" 0 'id,label\n1,one\n' label
printf 'id,label\n1,one\n' > "$tmp/a.csv"
printf 'year,n\n2024,1\n' > "$tmp/b.csv"
n=$((n + 1)); status=0
sh bin/csvcol year "$tmp/b.csv" "$tmp/a.csv" > "$tmp/out" 2>/dev/null || status=$?
if [ "$status" -eq 2 ] && [ "$(cat "$tmp/out")" = 2024 ]; then echo "ok $n - stops at the first file without the column"
else failed=$((failed + 1)); echo "not ok $n - stops at the first file without the column (exit $status)"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
