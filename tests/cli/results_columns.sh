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
[ "$(echo "$out" | sed -n 2p)" = "100,sin(3*x)" ] || { echo "--columns config/target,config/steps: $out"; exit 1; }
# A key the config's protocol fixes is one key, under the name --set uses:
# the protocol's run shows its x, the run that changed x the new one (not
# "(none)" against [-3,3] with the old value hidden under protocol/x).
"$ffnlab" sweep abs --out "$work/abs/protocol" -q > /dev/null || exit 1
"$ffnlab" sweep abs --set 'x=[-3,3]' --out "$work/abs/moved" -q > /dev/null || exit 1
out=$("$ffnlab" results "$work/abs" -f csv --columns folder,config/x) || { echo "results of abs: $out"; exit 1; }
echo "$out" | grep -q '/protocol,"\[-2,3\]"$' || { echo "the protocol's x is not config/x: $out"; exit 1; }
echo "$out" | grep -q '/moved,"\[-3,3\]"$' || { echo "the set x is not config/x: $out"; exit 1; }
out=$("$ffnlab" diff "$work/abs/protocol" "$work/abs/moved")
echo "$out" | grep -q '^| config/x *| \[-2,3\] | \[-3,3\] *|$' || { echo "diff does not name x once, old and new: $out"; exit 1; }
if echo "$out" | grep -q 'config/protocol/x'; then echo "diff lists the protocol's x as a second key: $out"; exit 1; fi
echo "results_columns.sh: the varied keys as columns, any config key by --columns, a protocol key as the key --set names"
