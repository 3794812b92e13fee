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

"$ffnlab" sweep -c "$config" -q --threads 1 --out "$work/whole" > /dev/null || { echo "the uninterrupted run failed"; exit 1; }
[ "$(manifest_number "$work/whole" runs_computed)" = 50 ] || { echo "a first run computed $(manifest_number "$work/whole" runs_computed) of 50"; exit 1; }

# The kills: each watches the store and kills the sweep once it holds
# 10, 20, 30 or 40 runs, so that it lands between two batches whatever the
# machine's speed (a kill at a share of the whole run's time missed every
# batch once the runs got fast). At 20000 steps a batch of 10 runs takes
# about 150 ms in Release, against a look at the store every 10 ms.
heavy="--set steps=20000"
"$ffnlab" sweep -c "$config" $heavy -q --threads 1 --out "$work/heavy" > /dev/null || { echo "the uninterrupted run at 20000 steps failed"; exit 1; }
stored() { cat "$1"/runs/seg-*.ffnruns 2> /dev/null | grep -c '^E '; }
resumed=0
for at in 10 20 30 40; do
    out=$work/killed_$at
    "$ffnlab" sweep -c "$config" $heavy -q --threads 1 --out "$out" > /dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2> /dev/null; do
        if [ "$(stored "$out")" -ge "$at" ]; then kill -KILL "$pid" 2> /dev/null; break; fi
        sleep 0.01
    done
    wait "$pid" 2> /dev/null
    "$ffnlab" sweep -c "$config" $heavy -q --threads 1 --out "$out" > /dev/null || { echo "the run after a kill at $at runs failed"; exit 1; }
    same_tables "$work/heavy" "$out" || { echo "after a kill at $at runs the resumed tables differ from the uninterrupted run's"; exit 1; }
    reused=$(manifest_number "$out" runs_reused)
    computed=$(manifest_number "$out" runs_computed)
    [ $((reused + computed)) = 50 ] || { echo "after a kill at $at runs: $reused reused and $computed computed of 50"; exit 1; }
    # The store keeps a few segment files, not a file per run.
    segments=$(ls "$out/runs" | grep -c '^seg-[0-9a-f]*\.ffnruns$')
    [ "$segments" -le 3 ] && [ "$(ls "$out/runs" | wc -l)" = "$segments" ] || { echo "after a kill at $at runs: runs/ holds $(ls "$out/runs" | wc -l) files"; exit 1; }
    if [ "$reused" -ge "$at" ] && [ "$computed" -gt 0 ]; then resumed=$((resumed + 1)); fi
    # Everything is kept now: a third run reuses all 50.
    "$ffnlab" sweep -c "$config" $heavy -q --threads 1 --out "$out" > /dev/null || exit 1
    [ "$(manifest_number "$out" runs_reused)" = 50 ] || { echo "after a kill at $at runs and a resume, a rerun reused $(manifest_number "$out" runs_reused) of 50"; exit 1; }
done
# A kill that came after the sweep's last batch resumes nothing; a machine
# that stalls the watcher for a whole batch can make one or two do so.
[ $resumed -ge 2 ] || { echo "only $resumed of 4 kills fell between two batches"; exit 1; }

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
echo "resume: $resumed of 4 kills resumed to the uninterrupted tables; unchanged rerun, changed lr, --fresh and more seeds as promised"
