#!/bin/sh
# sweep --shard I/N and merge: three shards of a sweep, computed apart and
# joined, give the single-process run's tables byte for byte; merge refuses
# a missing shard, a shard given twice and a shard of another sweep.
# Usage: shards.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
config=configs/width_quick.json
"$ffnlab" sweep -c "$config" -q --out "$work/single" > /dev/null || { echo "the single run failed"; exit 1; }
for i in 1 2 3; do
    "$ffnlab" sweep -c "$config" -q --shard "$i/3" --out "$work/shard$i" || { echo "shard $i/3 failed"; exit 1; }
done
total=0
for i in 1 2 3; do  # each computed its part and nothing more: 50 runs in all
    n=$(cat "$work/shard$i/runs"/seg-*.ffnruns | grep -c '^E ')
    computed=$(sed -n 's/.*"runs_computed": \([0-9]*\).*/\1/p' "$work/shard$i/shard.json")
    [ "$n" = "$computed" ] || { echo "shard $i/3 holds $n runs but computed $computed"; exit 1; }
    total=$((total + n))
done
[ $total = 50 ] || { echo "the 3 shards hold $total runs, not 50"; exit 1; }
"$ffnlab" merge "$work/shard3" "$work/shard1" "$work/shard2" -q --out "$work/merged" > /dev/null || { echo "merge failed"; exit 1; }
diff -r --exclude=manifest.json --exclude=runs "$work/single" "$work/merged" || { echo "the merged tables differ from the single run's"; exit 1; }
# --shards-in: the parts as subfolders 1..3 of one folder (ffn-lab slurm's
# layout), with a killed part's hidden staging folder beside them.
mkdir -p "$work/parts/.3.staging-abc123"
for i in 1 2 3; do cp -r "$work/shard$i" "$work/parts/$i"; done
"$ffnlab" merge --shards-in "$work/parts" -q --out "$work/merged_in" > /dev/null || { echo "merge --shards-in failed"; exit 1; }
diff -r --exclude=manifest.json --exclude=runs "$work/single" "$work/merged_in" || { echo "merge --shards-in differs from the single run"; exit 1; }
refused() {  # refused WHAT REGEX ARGS...: exit 2 with REGEX on stderr
    what=$1
    regex=$2
    shift 2
    "$ffnlab" "$@" > /dev/null 2> "$work/err"
    status=$?
    [ $status = 2 ] || { echo "$what: exit $status, not 2"; exit 1; }
    grep -q -e "$regex" "$work/err" || { echo "$what: stderr '$(cat "$work/err")' lacks '$regex'"; exit 1; }
}
refused "a missing shard" "shard 2/3 missing" merge "$work/shard1" "$work/shard3" -q
refused "a shard twice" "both are shard 1/3" merge "$work/shard1" "$work/shard1" "$work/shard2" "$work/shard3" -q
"$ffnlab" sweep -c "$config" -q --set lr=0.002 --set steps=20 --shard 2/3 --out "$work/other2" || exit 1
refused "another sweep's shard" "shards of different sweeps (configs/width_quick.json with no --set, and with --set lr=0.002 --set steps=20)" merge "$work/shard1" "$work/other2" "$work/shard3" -q
# Shards run with --set: the merged manifest records them as a single run's does.
for i in 1 2; do "$ffnlab" sweep -c "$config" -q --set steps=20 --shard "$i/2" --out "$work/set$i" || exit 1; done
"$ffnlab" merge "$work/set1" "$work/set2" -q --out "$work/set_merged" > /dev/null || { echo "merging shards run with --set failed"; exit 1; }
tr -d ' \n' < "$work/set_merged/manifest.json" | grep -q '"overrides":\["steps=20"\]' || { echo "the merged manifest lost the shards' --set"; exit 1; }
refused "a folder that is no shard" "no shard.json" merge "$work/shard1" "$work/single" "$work/shard3" -q
rm -r "$work/parts/2"
refused "--shards-in with a part missing" "shard 2/3 missing" merge --shards-in "$work/parts" -q
refused "--shards-in of no folder" "--shards-in $work/nowhere: no such folder" merge --shards-in "$work/nowhere" -q
refused "merge with no shards" "name the shard folders, or give --shards-in DIR" merge -q
# A run's line edited (its numbers forged, its MAC left): refused, as
# failing authentication, not merged into the tables.
cp -r "$work/shard3" "$work/forged3"
sed -i '0,/^E /s/^\(E [0-9a-f]* [0-9a-f]* {"x":"width_sweep","r":"[0-9a-f]*","t":\[\["[0-9a-f]*",\[\[\)[0-9]/\19/' "$work/forged3/runs"/seg-*.ffnruns
cmp -s "$work/shard3/runs"/seg-*.ffnruns "$work/forged3/runs"/seg-*.ffnruns && { echo "the forging sed changed nothing"; exit 1; }
refused "a shard with a forged run" "1 of 50 runs are in none of the shards (1 found but failing authentication" merge "$work/shard1" "$work/shard2" "$work/forged3" -q
sed -i '0,/^E /{/^E /d}' "$work/shard2/runs"/seg-*.ffnruns
refused "a shard that lost a run" "1 of 50 runs are in none of the shards" merge "$work/shard1" "$work/shard2" "$work/shard3" -q
echo "shards: 3 shards merged into the single run's tables, listed or --shards-in; missing, repeated, foreign, forged and incomplete shards refused"
