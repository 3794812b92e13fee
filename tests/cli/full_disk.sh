#!/bin/sh
# A disk that fills while a sweep writes (a file size limit stands in for
# it: no privileges needed): one line naming the --out folder the user gave,
# not the hidden staging folder, no warning before it, exit 2, and nothing
# left beside the folder.
# Usage: full_disk.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
# 4 blocks of 512 bytes: the run cache's segment and the first table do not fit.
out=$(sh -c "trap '' XFSZ; ulimit -f 4; exec '$ffnlab' sweep configs/width_quick.json -q --out '$work/w'" 2>&1); rc=$?
[ "$rc" = 2 ] || { echo "exit $rc: $out"; exit 1; }
[ "$out" = "ffn-lab: $work/w/width.md: cannot write (File too large)" ] || { echo "said: $out"; exit 1; }
[ "$(ls -A "$work")" = "w" ] || { echo "left beside --out: $(ls -A "$work")"; exit 1; }
echo "full_disk.sh: one line naming --out, exit 2"
