#!/bin/sh
# sweep --dry-run's estimate (runner/estimate.h), from a speed store of the
# test's own: the first estimate of a kind calibrates it by probes and
# stores the speed, so a second estimate of the plan says the same; a sweep
# that runs for a second stores what it measured, and the next estimate
# cites that sweep. (Whether an estimate is near the wall time is a
# benchmark's question, `ffn-lab bench estimate`, not a test's.)
# Usage: estimate.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
FFNLAB_SPEEDS=$work/speeds.json
export FFNLAB_SPEEDS
estimate() { "$ffnlab" sweep -c configs/width_quick.json --dry-run | grep '^estimated time'; }

first=$(estimate) || { echo "no estimate: $first"; exit 1; }
case "$first" in "estimated time: about "*" s on "*"at the speed of probes of configs/width_quick.json"*) ;;
    *) echo "the first estimate is not from probes: $first"; exit 1 ;; esac
[ -f "$FFNLAB_SPEEDS" ] || { echo "the probes' speed was not stored"; exit 1; }
second=$(estimate)
[ "$first" = "$second" ] || { echo "two estimates differ: '$first' and '$second'"; exit 1; }

# Two widths at 15000 steps: two seconds or more here, long enough to teach.
"$ffnlab" sweep -c configs/width.json --set sweep.model.width=[16,32] --set steps=15000 -q > /dev/null || { echo "the sweep failed"; exit 1; }
third=$(estimate)
case "$third" in *"at the speed of a sweep of configs/width.json (200 runs in "*) ;;
    *) echo "the estimate after a sweep does not cite it: $third"; exit 1 ;; esac
[ "$(estimate)" = "$third" ] || { echo "two estimates after the sweep differ"; exit 1; }

# With --out, the runs its cache holds cost nothing: half of them cached,
# the estimate is for the other half; all of them, no time at all.
"$ffnlab" sweep -c configs/width_quick.json --set seeds=0:5 --out "$work/out" -q > /dev/null || { echo "the half sweep failed"; exit 1; }
half=$("$ffnlab" sweep -c configs/width_quick.json --dry-run --out "$work/out" | grep '^estimated time')
case "$half" in *"for 25 runs not in the cache, which holds 25 more"*) ;; *) echo "half cached: $half"; exit 1 ;; esac
"$ffnlab" sweep -c configs/width_quick.json --out "$work/out" -q > /dev/null || { echo "the whole sweep failed"; exit 1; }
all=$("$ffnlab" sweep -c configs/width_quick.json --dry-run --out "$work/out" | grep '^estimated time')
[ "$all" = "estimated time: none; the cache holds all 50 runs" ] || { echo "all cached: $all"; exit 1; }
fresh=$("$ffnlab" sweep -c configs/width_quick.json --dry-run --out "$work/out" --fresh | grep '^estimated time')
case "$fresh" in *"for 50 runs, at the speed"*) ;; *) echo "--fresh counted the cache: $fresh"; exit 1 ;; esac

# A damaged store is no speed: the kind is calibrated again, never a negative time.
printf '{"width_sweep": 1, "x": [' > "$FFNLAB_SPEEDS"
case "$(estimate)" in *"at the speed of probes of"*) ;; *) echo "a store that does not parse was used"; exit 1 ;; esac
sed 's/"seconds_per_cost": [0-9.e+-]*/"seconds_per_cost": -1/' "$FFNLAB_SPEEDS" > "$work/edited.json" && mv "$work/edited.json" "$FFNLAB_SPEEDS"
case "$(estimate)" in *"about -"*) echo "a negative stored speed gave a negative estimate"; exit 1 ;;
    *"at the speed of probes of"*) ;; *) echo "a negative stored speed was not replaced"; exit 1 ;; esac

# A kind that trains nothing is timed on a sample of its runs as they are.
out=$("$ffnlab" sweep -c configs/params.json --dry-run | grep '^estimated time')
case "$out" in "estimated time: about "*"at the speed of probes of configs/params.json"*) ;;
    *) echo "a kind that trains nothing: $out"; exit 1 ;; esac
# Swept steps cannot be probed: no estimate until a sweep of the kind has run.
out=$("$ffnlab" sweep -c configs/tms_pentagon.json --set sweep.steps=[10,20] --dry-run | grep '^estimated time')
case "$out" in "estimated time: not known yet (no sweep of 'toy_superposition' has run here"*"'steps' is swept"*) ;;
    *) echo "swept steps: $out"; exit 1 ;; esac
echo "estimate.sh: probes once, the same estimate twice, then a past sweep's speed; cached runs left out"
