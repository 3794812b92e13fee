#!/bin/sh
# Kills `ffn-lab sweep --out DIR` at many points, alternating two configs
# whose output sets differ, and checks after every kill that DIR holds one
# whole set: the files of exactly one experiment, each readable, beside that
# experiment's manifest. Usage: kill_during_write.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
out=$work/out
rm -rf "$work"
mkdir -p "$work"
params="params.csv params.json params.md manifest.json"
abs="grid.csv grid.json grid.md jacobian.csv jacobian.json jacobian.md manifest.json worked_example.csv worked_example.json worked_example.md"
i=0
while [ $i -lt 40 ]; do
    if [ $((i % 2)) -eq 0 ]; then config=configs/params.json; else config=configs/abs.json; fi
    # Delays from 0 to 78 ms, 2 ms apart: before, during and after the write.
    delay=$(printf '0.%03d' $((i * 2)))
    timeout -s KILL "$delay" "$ffnlab" sweep -c "$config" -q --out "$out" > /dev/null 2>&1
    if [ -e "$out" ]; then
        files=$(ls "$out" | sort | tr '\n' ' ')
        if grep -q '"experiment": "param_count"' "$out/manifest.json" 2>/dev/null; then want=$params
        elif grep -q '"experiment": "abs_construction"' "$out/manifest.json" 2>/dev/null; then want=$abs
        else want="(empty)"; [ -z "$files" ] && files="(empty)"
        fi
        want=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
        [ "$want" = "(empty) " ] && want="(empty)"
        if [ "$files" != "$want" ] && [ "$files" != "(empty)" ]; then
            echo "after a kill at $delay s: $out holds '$files', expected one whole set '$want'"
            exit 1
        fi
        for f in "$out"/*.json "$out"/*.csv; do
            [ -e "$f" ] || continue
            [ "$(basename "$f")" = manifest.json ] && continue
            "$ffnlab" diff "$f" "$f" > /dev/null 2>&1 || { echo "after a kill at $delay s: $f does not read back"; exit 1; }
        done
    fi
    i=$((i + 1))
done
echo "40 kills: every state of $out was one whole output set"
