#!/bin/sh
# `ffn-lab results` shows what varied (runner::result_folders): a column per
# config key whose value differs between the folders listed, none for a key
# they share, and --columns config/KEY for any key of the config.
# Usage: results_columns.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
"$ffnlab" sweep configs/smoke/width_small.json --set steps=100 --out "$work/results/a" -q > /dev/null || exit 1
"$ffnlab" sweep configs/smoke/width_small.json --set steps=200 --set lr=0.01 --out "$work/results/b" -q > /dev/null || exit 1
out=$("$ffnlab" results "$work/results" -f csv) || { echo "results failed: $out"; exit 1; }
header=$(echo "$out" | head -1)
case "$header" in *",config/lr,config/steps") ;; *) echo "no column per varied key: $header"; exit 1 ;; esac
case "$header" in *"config/target"*) echo "a key both folders share has a column: $header"; exit 1 ;; esac
echo "$out" | grep -q "/b,.*,0.01,200$" || { echo "folder b's row lacks its lr and steps: $out"; exit 1; }
out=$("$ffnlab" results "$work/results" -f csv --columns config/target,config/steps) || { echo "--columns config/target: $out"; exit 1; }
[ "$(echo "$out" | sed -n 2p)" = "sin(3*x),100" ] || { echo "--columns config/target,config/steps: $out"; exit 1; }
# A set whose manifest is damaged is left out, and said to be, not dropped
# from the list in silence.
cp -r "$work/results/b" "$work/results/c"
echo '{"experiment": "width_sweep", "output_fi' > "$work/results/c/manifest.json"
out=$("$ffnlab" results "$work/results" -f csv 2> "$work/err") || { echo "results with a damaged manifest failed: $out"; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 3 ] || { echo "expected the two whole sets' rows: $out"; exit 1; }
grep -q "results/c: its manifest.json is not one ffn-lab wrote" "$work/err" || { echo "the damaged set is not named: $(cat "$work/err")"; exit 1; }
echo "results_columns.sh: the varied keys as columns, any config key by --columns, a damaged set named"
