#!/bin/sh
# On a terminal the progress line is redrawn in place and ended when the
# last run is done, so the first table starts on a line of its own (a
# pseudo-terminal from script(1), which merges stdout and stderr as a
# terminal shows them).
# Usage: progress_tty.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
command -v script > /dev/null || { echo "progress_tty.sh: no script(1) (bsdutils)"; exit 1; }
# About two seconds on one thread: past the one second before progress shows.
script -qec "$ffnlab sweep configs/width_quick.json --set seeds=0:20 --set steps=20000 --threads 1 --table width" /dev/null > "$work/tty.txt" 2>&1 ||
    { echo "the sweep failed: $(cat "$work/tty.txt")"; exit 1; }
tr -d '\r' < "$work/tty.txt" > "$work/lines.txt"
grep -q "runs 100/100, .* ETA 0.0 s" "$work/lines.txt" || { echo "no final progress line: $(head -c 400 "$work/lines.txt")"; exit 1; }
grep -q "^## width" "$work/lines.txt" || { echo "the first table does not start a line of its own: $(head -c 600 "$work/lines.txt")"; exit 1; }
echo "progress_tty.sh: the progress line ends before the first table"
