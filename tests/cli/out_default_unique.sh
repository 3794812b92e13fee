#!/bin/sh
# --out with no folder writes results/<config>/<UTC time>/, and a sweep of
# the same second takes <time>-2: it never writes into another sweep's set.
# The folders of the next few seconds are made first, each holding a set's
# file, so the collision happens whatever the clock does.
# Usage: out_default_unique.sh FFN_LAB CONFIG WORK_FOLDER
set -u
ffnlab=$1
config=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
now=$(date -u +%s)
for s in 0 1 2 3 4 5; do
    stamp=$(date -u -d "@$((now + s))" +%Y%m%d-%H%M%S)
    mkdir -p "results/width_small/$stamp"
    echo "an earlier set's" > "results/width_small/$stamp/width.csv"
done
for lr in 0.002 0.004; do
    "$ffnlab" sweep "$config" --set lr=$lr -q --out > /dev/null 2> err || { echo "the sweep with lr=$lr failed: $(cat err)"; exit 1; }
done
for f in results/width_small/*/width.csv; do
    case "$(basename "$(dirname "$f")")" in
        *-[0-9]) grep -q 'model.width' "$f" || { echo "$f is not a width table"; exit 1; } ;;
        *) [ "$(cat "$f")" = "an earlier set's" ] || { echo "$f was written over"; exit 1; } ;;
    esac
done
sets=$(ls -d results/width_small/*-[0-9] 2> /dev/null | wc -l)
[ "$sets" = 2 ] || { echo "expected 2 new folders, found $sets: $(ls results/width_small)"; exit 1; }
echo "out_default_unique: two sweeps, two new folders, the earlier sets kept"
