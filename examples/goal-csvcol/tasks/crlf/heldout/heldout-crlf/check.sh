#!/bin/sh
# Held-out checks for CRLF line endings (no quoted fields). Run from the repository root.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heldout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() {
  n=$((n + 1))
  printf '%b' "$2" > "$tmp/want"
  status=0
  printf '%b' "$3" | sh bin/csvcol "$4" > "$tmp/got" 2>/dev/null || status=$?
  if [ "$status" -eq 0 ] && cmp -s "$tmp/want" "$tmp/got"; then echo "ok $n - $1"
  else failed=$((failed + 1)); echo "not ok $n - $1 (exit $status)"; fi
}
check "last column of a CRLF file" 'a@x.org\nb@x.org\n' 'id,email\r\n1,a@x.org\r\n2,b@x.org\r\n' email
check "no CR in the first column" '1\n2\n' 'id,email\r\n1,a@x.org\r\n2,b@x.org\r\n' id
check "column number on CRLF" 'a@x.org\n' 'id,email\r\n1,a@x.org\r\n' 2
check "LF files still work" 'a@x.org\n' 'id,email\n1,a@x.org\n' email
echo "1..$n"
[ "$failed" -eq 0 ]
