#!/bin/sh
# sweep --dry-run's estimate (runner/estimate.h), from a speed store of the
# test's own: a kind never run here is estimated from probes, which a dry
# run does not keep (it writes nothing); a sweep that runs for a second
# stores what it measured, and the next estimates cite that sweep and agree.
# (Whether an estimate is near the wall time is a benchmark's question,
# `ffn-lab bench estimate`, not a test's.)
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
case "$first" in "estimated time: about "*" s on "*"at the speed of probes of configs/width_quick.json on this machine, just now; not kept"*) ;;
    *) echo "the first estimate is not from probes, or says it kept them: $first"; exit 1 ;; esac
[ ! -e "$FFNLAB_SPEEDS" ] || { echo "a dry run wrote the speed store"; exit 1; }

# A hundred seeds at two widths: two seconds or more here, long enough to teach.
"$ffnlab" sweep -c configs/width_quick.json --set seeds=0:100 --set sweep.model.width=[16,32] --set steps=15000 -q > /dev/null ||
    { echo "the sweep failed"; exit 1; }
third=$(estimate)
case "$third" in *"at the speed of a sweep of configs/width_quick.json (200 runs in "*"; kept in"*) ;;
    *) echo "the estimate after a sweep does not cite it: $third"; exit 1 ;; esac
[ "$(estimate)" = "$third" ] || { echo "two estimates after the sweep differ"; exit 1; }
# The speed is the config's: another config of the kind is probed.
case "$("$ffnlab" sweep -c configs/width.json --dry-run | grep '^estimated time')" in *"at the speed of probes of configs/width.json"*) ;;
    *) echo "width.json was estimated from width_quick.json's speed"; exit 1 ;; esac

# A stored speed that is not a positive number is no speed: probes again,
# never a negative time.
cp "$FFNLAB_SPEEDS" "$work/kept.json"
sed 's/"seconds_per_cost": [0-9.e+-]*/"seconds_per_cost": -1/' "$work/kept.json" > "$FFNLAB_SPEEDS"
case "$(estimate)" in *"about -"*) echo "a negative stored speed gave a negative estimate"; exit 1 ;;
    *"at the speed of probes of"*) ;; *) echo "a negative stored speed was used"; exit 1 ;; esac
printf '{"width_sweep": 1, "x": [' > "$FFNLAB_SPEEDS"
case "$(estimate)" in *"at the speed of probes of"*) ;; *) echo "a store that does not parse was used"; exit 1 ;; esac
cp "$work/kept.json" "$FFNLAB_SPEEDS"

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

# A kind that trains nothing is timed on a sample of its runs as they are.
out=$("$ffnlab" sweep -c configs/params.json --dry-run | grep '^estimated time')
case "$out" in "estimated time: about "*"at the speed of probes of configs/params.json"*) ;;
    *) echo "a kind that trains nothing: $out"; exit 1 ;; esac
# Swept steps cannot be probed: no estimate until a sweep of the kind has run.
out=$("$ffnlab" sweep -c configs/tms_pentagon.json --set sweep.steps=[10,20] --dry-run | grep '^estimated time')
case "$out" in "estimated time: not known yet (no sweep of configs/tms_pentagon.json has run here"*"'steps' is swept"*) ;;
    *) echo "swept steps: $out"; exit 1 ;; esac
echo "estimate.sh: probes not kept by a dry run, then a past sweep's speed, the same estimate twice; cached runs left out"
