#!/bin/sh
# Held-out checks for bin/csvcol: run the tool on held-out inputs and compare stdout and
# exit status with the expected ones. Run from the gate environment root.
cases=checks/cases
tmp=$(mktemp -d "${TMPDIR:-/tmp}/csvcol-heldout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# run_case NAME WANT_STATUS WANT_STDOUT(printf %b) STDIN_FILE ARGS...
run_case() {
  name=$1 want_status=$2 input=$4
  printf '%b' "$3" > "$tmp/want"
  shift 4
  n=$((n + 1))
  status=0
  sh bin/csvcol "$@" > "$tmp/got" 2> "$tmp/err" < "$input" || status=$?
  if [ "$status" -eq "$want_status" ] && cmp -s "$tmp/want" "$tmp/got"; then
    echo "ok $n - $name"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name (exit $status, want $want_status)"
    diff "$tmp/want" "$tmp/got" | sed 's/^/#   /'
  fi
  if [ "$want_status" -ne 0 ] && [ ! -s "$tmp/err" ]; then
    failed=$((failed + 1))
    echo "not ok $n - $name: no error message on stderr"
  fi
}
# check NAME WANT_STATUS WANT_STDOUT ARGS...   (stdin is /dev/null)
check() {
  c_name=$1 c_status=$2 c_out=$3
  shift 3
  run_case "$c_name" "$c_status" "$c_out" /dev/null "$@"
}

check "doubled quotes inside quoted fields" 0 'say "hi"\n\n"quoted" start\nplain "inner" quotes\n' \
  quote "$cases/escaped.csv"
check "quoted header name, CRLF" 0 'Widget, large\nGadget "Pro"\n\n' "product name" "$cases/crlf-quoted.csv"
check "column after quoted fields, CRLF" 0 '9.99\n19.50\n0\n' price "$cases/crlf-quoted.csv"
check "short records print empty lines" 0 '3\n\n\n\n' c "$cases/short.csv"
check "trailing empty field" 0 '2\n5\n\n8\n' 2 "$cases/short.csv"
check "each file has its own header" 0 '1\n2\n3\n4\n' id "$cases/part1.csv" "$cases/part2.csv"
check "header-only file" 0 '' y "$cases/header-only.csv"
check "header name wins over column number" 0 '10\n7\n' 2024 "$cases/numeric-header.csv"
check "column number" 0 '12\n9\n' 3 "$cases/numeric-header.csv"
check "unknown column" 2 '' nope "$cases/part1.csv"
check "column number out of range" 2 '' 3 "$cases/part1.csv"
check "column number zero" 2 '' 0 "$cases/part1.csv"
check "stops at the first file without the column" 2 'sales\ncosts\n' year "$cases/numeric-header.csv" "$cases/part1.csv"
check "no arguments" 2 ''
run_case "standard input" 0 'Ann\nBob\nCleo\nDan\n' "$cases/escaped.csv" name
run_case "dash means standard input" 0 'one\ntwo\nthree\nfour\n' "$cases/part1.csv" label - "$cases/part2.csv"

echo "1..$n"
if [ "$failed" -ne 0 ]; then
  echo "# $failed of $n failed"
  exit 1
fi
echo "# all $n passed"
