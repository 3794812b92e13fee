#!/bin/sh
# Kills `ffn-lab sweep --out DIR` at many points, alternating two configs
# whose output sets differ, and checks after every kill that DIR holds one
# whole set (output_set.sh). Usage: kill_during_write.sh FFN_LAB WORK_FOLDER
set -u
. "$(dirname "$0")/output_set.sh"
i=0
while [ $i -lt 40 ]; do
    if [ $((i % 2)) -eq 0 ]; then config=configs/params.json; else config=configs/abs.json; fi
    # Delays from 0 to 78 ms, 2 ms apart: before, during and after the write.
    delay=$(printf '0.%03d' $((i * 2)))
    timeout -s KILL "$delay" "$ffnlab" sweep -c "$config" -q --out "$out" > /dev/null 2>&1
    whole_set "$ffnlab" "$out" "after a kill at $delay s" || exit 1
    i=$((i + 1))
done
echo "40 kills: every state of $out was one whole output set"
