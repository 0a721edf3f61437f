#!/bin/sh
# Held-out checks for quoted fields (RFC 4180), LF line endings only. Run from the repository root.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heldout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
# check NAME WANT_STDOUT(printf %b) STDIN(printf %b) COLUMN
check() {
  n=$((n + 1))
  printf '%b' "$2" > "$tmp/want"
  status=0
  printf '%b' "$3" | sh bin/csvcol "$4" > "$tmp/got" 2>/dev/null || status=$?
  if [ "$status" -eq 0 ] && cmp -s "$tmp/want" "$tmp/got"; then echo "ok $n - $1"
  else failed=$((failed + 1)); echo "not ok $n - $1 (exit $status)"; fi
}
check "quoted comma" 'Paris\n' 'name,city\n"Smith, John",Paris\n' city
check "quotes are not printed" 'Smith, John\n' 'name,city\n"Smith, John",Paris\n' name
check "doubled quote is one quote" 'say "hi"\n' 'name,quote\nAnn,"say ""hi"""\n' quote
check "empty quoted field" '\nx\n' 'name,quote\nBob,""\nEve,x\n' quote
check "quote inside an unquoted field" 'say "hi"\n' 'a,b\n1,say "hi"\n' b
check "quoted header name" '9.99\n' 'sku,"product name",price\nA1,"Widget, large",9.99\n' price
echo "1..$n"
[ "$failed" -eq 0 ]
