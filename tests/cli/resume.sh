#!/bin/sh
# The run cache (runner/run_cache.h): a sweep killed at several points and
# run again into the same --out gives the tables of an uninterrupted run,
# byte for byte, computing only the runs it lacks; a changed config reuses
# nothing; --fresh reuses nothing; a sweep grown by more seeds reuses the
# seeds it had. Usage: resume.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
config=configs/width_quick.json  # 50 runs in 5 batches
manifest_number() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1/manifest.json"; }
same_tables() { diff -r --exclude=manifest.json --exclude=runs "$1" "$2" > /dev/null; }

start=$(date +%s.%N)
"$ffnlab" sweep -c "$config" -q --threads 1 --out "$work/whole" > /dev/null || { echo "the uninterrupted run failed"; exit 1; }
whole=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
[ "$(manifest_number "$work/whole" runs_computed)" = 50 ] || { echo "a first run computed $(manifest_number "$work/whole" runs_computed) of 50"; exit 1; }

# Kills at a tenth, three tenths ... of the uninterrupted run's time, so
# that they land inside it on a fast machine and a slow one (sanitizers).
resumed=0
for share in 0.1 0.3 0.5 0.7 0.9; do
    delay=$(awk -v a="$whole" -v b="$share" 'BEGIN { print a * b }')
    out=$work/killed_$share
    timeout -s KILL "$delay" "$ffnlab" sweep -c "$config" -q --threads 1 --out "$out" > /dev/null 2>&1
    "$ffnlab" sweep -c "$config" -q --threads 1 --out "$out" > /dev/null || { echo "the run after a kill at $delay s failed"; exit 1; }
    same_tables "$work/whole" "$out" || { echo "after a kill at $delay s the resumed tables differ from the uninterrupted run's"; exit 1; }
    reused=$(manifest_number "$out" runs_reused)
    computed=$(manifest_number "$out" runs_computed)
    [ $((reused + computed)) = 50 ] || { echo "after a kill at $delay s: $reused reused and $computed computed of 50"; exit 1; }
    # The store keeps a few segment files, not a file per run.
    segments=$(ls "$out/runs" | grep -c '^seg-[0-9a-f]*\.ffnruns$')
    [ "$segments" -le 3 ] && [ "$(ls "$out/runs" | wc -l)" = "$segments" ] || { echo "after a kill at $delay s: runs/ holds $(ls "$out/runs" | wc -l) files"; exit 1; }
    if [ "$reused" -gt 0 ] && [ "$computed" -gt 0 ]; then resumed=$((resumed + 1)); fi
    # Everything is kept now: a third run reuses all 50.
    "$ffnlab" sweep -c "$config" -q --threads 1 --out "$out" > /dev/null || exit 1
    [ "$(manifest_number "$out" runs_reused)" = 50 ] || { echo "after a kill at $delay s and a resume, a rerun reused $(manifest_number "$out" runs_reused) of 50"; exit 1; }
done
# The machine's speed decides where the kills land; at least one must fall
# between the first finished batch and the last.
[ $resumed -gt 0 ] || { echo "no kill fell between two batches: nothing was resumed"; exit 1; }

# Rerun unchanged: everything reused, the same tables.
"$ffnlab" sweep -c "$config" -q --threads 1 --out "$work/whole" > /dev/null || exit 1
[ "$(manifest_number "$work/whole" runs_reused)" = 50 ] || { echo "an unchanged rerun reused $(manifest_number "$work/whole" runs_reused) of 50"; exit 1; }
cp -r "$work/whole" "$work/whole_again"
# A changed value is another run: nothing reused.
"$ffnlab" sweep -c "$config" -q --set lr=0.002 --set steps=50 --out "$work/whole" > /dev/null || exit 1
[ "$(manifest_number "$work/whole" runs_reused)" = 0 ] || { echo "a changed lr reused runs"; exit 1; }
# --fresh: nothing reused, the same tables as the uninterrupted run.
"$ffnlab" sweep -c "$config" -q --fresh --out "$work/whole" > /dev/null || exit 1
[ "$(manifest_number "$work/whole" runs_reused)" = 0 ] || { echo "--fresh reused runs"; exit 1; }
same_tables "$work/whole" "$work/whole_again" || { echo "--fresh changed the tables"; exit 1; }
# More seeds: the five it had are reused, the new five computed.
"$ffnlab" sweep -c "$config" -q --set 'seeds=[0,1,2,3,4]' --out "$work/grown" > /dev/null || exit 1
"$ffnlab" sweep -c "$config" -q --out "$work/grown" > /dev/null || exit 1
[ "$(manifest_number "$work/grown" runs_reused)" = 25 ] || { echo "growing 5 seeds to 10 reused $(manifest_number "$work/grown" runs_reused) of 25"; exit 1; }
same_tables "$work/whole_again" "$work/grown" || { echo "the grown sweep's tables differ from the uninterrupted run's"; exit 1; }
echo "resume: $resumed of 5 kills resumed to the uninterrupted tables; unchanged rerun, changed lr, --fresh and more seeds as promised"
