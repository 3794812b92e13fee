#!/bin/sh
# A sweep of many runs holds little per run beyond its plan: the width
# sweep keeps each run's row in the compact store (runner/run_rows.h) and
# writes its runs table row by row. `bench scale` measures, each in a
# child process of its own, the peak memory of 10^5 runs of the 20-step
# width sweep into an --out folder and of the same plan's dry run; their
# difference over the runs must stay under 200 bytes a run (here about
# 148; it was about 790 when the runs' tables were held as Tables).
# Not in a sanitizer build (tests/CMakeLists.txt): its shadow memory is no
# user's. Usage: flat_memory.sh FFN_LAB
set -u
out=$("$1" bench scale --runs 100000 --json) || { echo "bench scale failed"; exit 1; }
number() { printf '%s\n' "$out" | sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p"; }
runs=$(number runs)
peak=$(number peak_mb)
dry=$(number dry_run_peak_mb)
[ -n "$runs" ] && [ -n "$peak" ] && [ -n "$dry" ] || { echo "bench scale printed no runs, peak_mb or dry_run_peak_mb: $out"; exit 1; }
# The line ctest looks for is printed only when the figure is under the bar.
awk -v runs="$runs" -v peak="$peak" -v dry="$dry" 'BEGIN {
    per_run = (peak - dry) * 1048576 / runs
    verdict = per_run < 200 ? "flat memory" : "NOT flat: 200 bytes a run or more"
    printf "%s: %d runs, %.1f MB peak, %.1f MB for the plan alone: %.0f bytes a run beyond the plan\n", verdict, runs, peak, dry, per_run
    exit !(per_run < 200)
}'
