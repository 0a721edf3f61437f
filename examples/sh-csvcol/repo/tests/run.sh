#!/bin/sh
# Visible tests for bin/csvcol. Run from the repository root: sh tests/run.sh
cases=tests/cases
tmp=$(mktemp -d "${TMPDIR:-/tmp}/csvcol-tests.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME WANT_STATUS WANT_STDOUT(printf %b) ARGS...
check() {
  name=$1 want_status=$2
  printf '%b' "$3" > "$tmp/want"
  shift 3
  n=$((n + 1))
  status=0
  sh bin/csvcol "$@" > "$tmp/got" 2> "$tmp/err" < /dev/null || status=$?
  if [ "$status" -eq "$want_status" ] && cmp -s "$tmp/want" "$tmp/got"; then
    echo "ok $n - $name"
  else
    failed=$((failed + 1))
    echo "not ok $n - $name (exit $status, want $want_status)"
    diff "$tmp/want" "$tmp/got" | sed 's/^/#   /'
    sed 's/^/#   stderr: /' "$tmp/err"
  fi
}

check "column by name" 0 'ann@example.com\nbob@example.org\ncleo@example.net\n' email "$cases/people.csv"
check "column by number" 0 '34\n27\n41\n' 3 "$cases/people.csv"
check "first column" 0 'Ann\nBob\nCleo\n' name "$cases/people.csv"
check "quoted field with a comma" 0 'Paris\nLyon\nSaint-Denis, Réunion\n' city "$cases/quoted.csv"
check "quotes are removed" 0 'Smith, John\nAda\nDoe, Jane\n' name "$cases/quoted.csv"
check "column after a quoted comma" 0 '75001\n69001\n97400\n' zip "$cases/quoted.csv"
check "CRLF line endings" 0 'ann@example.com\nbob@example.org\n' email "$cases/crlf.csv"

echo "1..$n"
if [ "$failed" -ne 0 ]; then
  echo "# $failed of $n failed"
  exit 1
fi
echo "# all $n passed"
