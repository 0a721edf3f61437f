#!/bin/sh
# The monitor's poll: prints the open user reports about csvcol (here, a file beside this script that a
# test or a person edits). A change in what it prints is a material change the monitor reacts to.
cat "$(dirname "$0")/reports.txt"
