#!/bin/sh
# Held-out case generator for the differential gate `cli-matches-reference`: prints COUNT random
# cases as JSON lines, drawn from SEED (loopgate draws a new seed on every gate run and records it).
# Inputs only, and only within csvcol's documented behaviour: RFC 4180 fields (plain, quoted with
# commas, doubled quotes, quotes inside unquoted fields), LF or CRLF, short and long records,
# columns by name or number, out-of-range and unknown columns, stdin or a file.
# usage: gen-cases.sh SEED COUNT
exec awk -v seed="$1" -v count="$2" '
function pick(s,    n, a) { n = split(s, a, " "); return a[int(rand() * n) + 1] }
function word() { return pick("ann bob cleo x 1 42 9.99 Paris Lyon Rue-7") }
function field(    r) {
  r = rand()
  if (r < 0.15) return ""
  if (r < 0.45) return word()
  if (r < 0.65) return "\"" word() ", " word() "\""
  if (r < 0.8) return "\"" word() " \"\"" word() "\"\"\""
  if (r < 0.9) return word() "\"" word()
  return "\"\""
}
# JSON string syntax, character by character (no backslash ever appears in the data).
function js(s,    out, i, c) {
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\"") out = out "\\\""
    else if (c == "\n") out = out "\\n"
    else if (c == "\r") out = out "\\r"
    else out = out c
  }
  return "\"" out "\""
}
BEGIN {
  srand(seed)
  for (k = 1; k <= count; k++) {
    ncol = 1 + int(rand() * 5)
    eol = rand() < 0.4 ? "\r\n" : "\n"
    hdr = ""
    for (i = 1; i <= ncol; i++) {
      name[i] = "col" i
      hdr = hdr (i > 1 ? "," : "") (rand() < 0.3 ? "\"" name[i] "\"" : name[i])
    }
    csv = hdr eol
    rows = int(rand() * 6)
    for (r = 1; r <= rows; r++) {
      nf = 1 + int(rand() * (ncol + 1))
      line = ""
      for (i = 1; i <= nf; i++) line = line (i > 1 ? "," : "") field()
      if (line == "") line = word()   # an empty line is not a record anyone documented
      csv = csv line eol
    }
    r = rand()
    if (r < 0.5) col = name[1 + int(rand() * ncol)]
    else if (r < 0.85) col = 1 + int(rand() * ncol)
    else if (r < 0.93) col = ncol + 1
    else col = "nope"
    if (rand() < 0.5)
      printf "{\"name\":%s,\"args\":[%s],\"stdin\":%s}\n", js("seed " seed " #" k), js(col), js(csv)
    else
      printf "{\"name\":%s,\"args\":[%s,\"${files}/in.csv\"],\"files\":{\"in.csv\":%s}}\n", js("seed " seed " #" k), js(col), js(csv)
  }
}'
