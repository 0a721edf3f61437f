#!/bin/sh
# Demo builder: an honest agent. $1 is loopgate's {required_fix}: empty on attempt 1.
# Attempt 1 strips CRs, reports unknown columns and keeps quoted commas together, but
# simply drops every quote character (so "" escapes are lost); once told that a gate
# failed, it applies the full RFC 4180 splitter.
required_fix=${1:-}
if [ -z "$required_fix" ]; then
cat > bin/csvcol <<'CSVCOL'
#!/bin/sh
# csvcol — print one column of CSV data.
#
# usage: csvcol COLUMN [FILE...]
#
#   COLUMN  a header name (exact match), or, if no header field has that name,
#           a 1-based column number
#   FILE    CSV files; with none, or with "-", standard input is read
#
# Every input starts with a header line; csvcol prints the selected field of each
# following record, one per line, without the header. Each FILE has its own header, so
# the column may sit at a different position in each file.
#
# Fields follow RFC 4180: a field may be enclosed in double quotes, and may then contain
# commas; inside a quoted field a doubled quote ("") stands for one literal quote. The
# enclosing quotes are not printed; a quote inside an unquoted field is an ordinary
# character. Lines may end in LF or CRLF; CRs are never printed.
# (Quoted fields that span several lines are not supported.) A record with fewer fields
# than the selected column prints an empty line.
#
# Exit status: 0 on success; 2, with a message on stderr, on a usage error or when
# COLUMN is neither a header name nor a number between 1 and the number of header
# fields of some input (csvcol stops at that input).
set -eu

if [ $# -lt 1 ]; then
  echo "usage: csvcol COLUMN [FILE...]" >&2
  exit 2
fi
col=$1
shift

awk -v col="$col" '
# Split line into fld[1..n]; commas inside quotes do not split.
function split_csv(line,    n, i, len, c, f, inq) {
    n = 0; f = ""; inq = 0
    len = length(line)
    for (i = 1; i <= len; i++) {
        c = substr(line, i, 1)
        if (c == "\"") inq = !inq
        else if (c == "," && !inq) { fld[++n] = f; f = "" }
        else f = f c
    }
    fld[++n] = f
    return n
}
{ sub(/\r$/, "") }
FNR == 1 {
    n = split_csv($0)
    idx = 0
    for (i = 1; i <= n; i++) if (fld[i] == col) { idx = i; break }
    if (idx == 0 && col ~ /^[0-9]+$/ && col + 0 >= 1 && col + 0 <= n) idx = col + 0
    if (idx == 0) {
        src = (FILENAME == "" || FILENAME == "-") ? "standard input" : FILENAME
        print "csvcol: " src ": no column \"" col "\"" | "cat 1>&2"
        close("cat 1>&2")
        exit 2
    }
    next
}
{
    n = split_csv($0)
    print (idx <= n ? fld[idx] : "")
}
' "$@"
CSVCOL
  echo "Attempt 1: strip CRs, error on unknown columns, don't split on commas inside quotes. Visible tests pass."
else
cat > bin/csvcol <<'CSVCOL'
#!/bin/sh
# csvcol — print one column of CSV data.
#
# usage: csvcol COLUMN [FILE...]
#
#   COLUMN  a header name (exact match), or, if no header field has that name,
#           a 1-based column number
#   FILE    CSV files; with none, or with "-", standard input is read
#
# Every input starts with a header line; csvcol prints the selected field of each
# following record, one per line, without the header. Each FILE has its own header, so
# the column may sit at a different position in each file.
#
# Fields follow RFC 4180: a field may be enclosed in double quotes, and may then contain
# commas; inside a quoted field a doubled quote ("") stands for one literal quote. The
# enclosing quotes are not printed; a quote inside an unquoted field is an ordinary
# character. Lines may end in LF or CRLF; CRs are never printed.
# (Quoted fields that span several lines are not supported.) A record with fewer fields
# than the selected column prints an empty line.
#
# Exit status: 0 on success; 2, with a message on stderr, on a usage error or when
# COLUMN is neither a header name nor a number between 1 and the number of header
# fields of some input (csvcol stops at that input).
set -eu

if [ $# -lt 1 ]; then
  echo "usage: csvcol COLUMN [FILE...]" >&2
  exit 2
fi
col=$1
shift

awk -v col="$col" '
# Split line into fld[1..n] following RFC 4180; returns n.
function split_csv(line,    n, i, len, c, f, inq, start) {
    n = 0; f = ""; inq = 0; start = 1
    len = length(line)
    for (i = 1; i <= len; i++) {
        c = substr(line, i, 1)
        if (inq) {
            if (c == "\"") {
                if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ }
                else inq = 0
            } else f = f c
        } else if (c == ",") {
            fld[++n] = f; f = ""; start = 1
            continue
        } else if (c == "\"" && start) {
            inq = 1
        } else f = f c
        start = 0
    }
    fld[++n] = f
    return n
}
{ sub(/\r$/, "") }
FNR == 1 {
    n = split_csv($0)
    idx = 0
    for (i = 1; i <= n; i++) if (fld[i] == col) { idx = i; break }
    if (idx == 0 && col ~ /^[0-9]+$/ && col + 0 >= 1 && col + 0 <= n) idx = col + 0
    if (idx == 0) {
        src = (FILENAME == "" || FILENAME == "-") ? "standard input" : FILENAME
        print "csvcol: " src ": no column \"" col "\"" | "cat 1>&2"
        close("cat 1>&2")
        exit 2
    }
    next
}
{
    n = split_csv($0)
    print (idx <= n ? fld[idx] : "")
}
' "$@"
CSVCOL
  echo "Attempt 2: after the required fix, parse fields per RFC 4180 (quotes open only at field start, \"\" is a literal quote)."
fi
chmod +x bin/csvcol
exit 0
