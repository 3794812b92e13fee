#!/bin/sh
# A sweep of many runs holds little per run beyond its plan: the width
# sweep keeps each run's row in the compact store (runner/run_rows.h) and
# writes its runs table row by row. `bench scale` measures, each in a
# child process of its own, the peak memory of 10^5 runs of the width
# sweep into an --out folder and of the same plan's dry run; their
# difference over the runs must stay under 200 bytes a run (here about
# 140; it was about 760 when the runs' tables were held as Tables).
# Release only: a sanitizer's shadow memory is no user's.
# Usage: flat_memory.sh FFN_LAB
set -u
out=$("$1" bench scale --runs 100000 --json) || { echo "bench scale failed"; exit 1; }
number() { printf '%s\n' "$out" | sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
runs=$(number runs)
peak=$(number peak_mb)
dry=$(number dry_run_peak_mb)
[ -n "$runs" ] && [ -n "$peak" ] && [ -n "$dry" ] || { echo "bench scale printed no runs, peak_mb or dry_run_peak_mb: $out"; exit 1; }
awk -v runs="$runs" -v peak="$peak" -v dry="$dry" 'BEGIN {
    per_run = (peak - dry) * 1048576 / runs
    printf "flat memory: %d runs, %.1f MB peak, %.1f MB for the plan alone: %.0f bytes a run beyond the plan\n", runs, peak, dry, per_run
    exit !(per_run < 200)
}' || { echo "the sweep holds 200 bytes a run or more beyond its plan"; exit 1; }
