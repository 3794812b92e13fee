#!/bin/sh
# Two `ffn-lab sweep --out DIR` at once into the same DIR, runs of one
# config (another config's folder is refused) whose output sets differ, 30 times: both must succeed (the later exchange wins)
# and DIR must then hold one whole set (output_set.sh), never a mix.
# Usage: concurrent_writers.sh FFN_LAB WORK_FOLDER
set -u
. "$(dirname "$0")/output_set.sh"
i=0
while [ $i -lt 30 ]; do
    # Small sizes, so that both runs take about as long and their writes meet.
    "$ffnlab" sweep -c configs/params.json --set 'zip.d=[64,128]' --set 'zip.m=[256,512]' -q --out "$out" \
        > /dev/null 2> "$work/a.err" &
    a=$!
    "$ffnlab" sweep -c configs/params.json -q --out "$out" > /dev/null 2> "$work/b.err" &
    b=$!
    wait $a || { echo "pair $i: the params run failed: $(cat "$work/a.err")"; exit 1; }
    wait $b || { echo "pair $i: the plain params run failed: $(cat "$work/b.err")"; exit 1; }
    whole_set "$ffnlab" "$out" "after concurrent pair $i" || exit 1
    i=$((i + 1))
done
echo "30 concurrent pairs: $out held one whole output set after each"
