#!/bin/sh
# Ctrl-C (SIGINT) or SIGTERM during a run of a config built into the
# binary: ffn-lab ends by that signal (the shell's 130 or 143), says how to
# resume, and the private folder it unpacked the carried files into is gone
# with it.
# Usage: signals.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work/tmp" "$work/here"
TMPDIR=$work/tmp
export TMPDIR
cd "$work/here" || exit 1  # outside a checkout: the built-in layer_units
# sh starts a background job with SIGINT ignored, and ffn-lab keeps a
# signal ignored at its start (as a script's Ctrl-C asks; the last case
# below): env gives the job the default back.
for signal in INT TERM; do
    env --default-signal=INT "$ffnlab" sweep layer_units --set permutations=99999 --set seeds=0:50 --out > /dev/null 2> "$work/err" &
    pid=$!
    tries=0
    until ls "$work/tmp" | grep -q '^ffn-lab-bundle-'; do
        tries=$((tries + 1))
        [ "$tries" -le 500 ] || { kill -KILL "$pid"; echo "$signal: no carried files' folder after 5 s"; exit 1; }
        sleep 0.01
    done
    sleep 0.3  # into the runs
    kill -"$signal" "$pid"
    wait "$pid"
    rc=$?
    expected=$([ "$signal" = INT ] && echo 130 || echo 143)
    [ "$rc" = "$expected" ] || { echo "$signal: exit $rc, expected $expected"; cat "$work/err"; exit 1; }
    # --out with no folder: the same command would start a new folder, so
    # the line names the one to resume.
    grep -q 'interrupted; the runs that finished are kept in results/layer_units/[0-9-]*/runs, and --out results/layer_units/[0-9-]* computes only the rest' "$work/err" ||
        { echo "$signal: no line saying what was kept and how to resume"; cat "$work/err"; exit 1; }
    [ -z "$(ls "$work/tmp")" ] || { echo "$signal: left in TMPDIR: $(ls "$work/tmp")"; exit 1; }
done
# A signal while the carried files are still being written (their first
# tenth of a second, when a typo is noticed) takes them all the same.
for at in 0.005 0.01 0.02 0.05 0.1 0.15; do
    "$ffnlab" sweep layer_units --set permutations=99999 --set seeds=0:50 > /dev/null 2> "$work/err" &
    pid=$!
    sleep "$at"
    kill -TERM "$pid"
    wait "$pid"
    [ -z "$(ls "$work/tmp")" ] || { echo "TERM at $at s: left in TMPDIR: $(ls "$work/tmp")"; exit 1; }
done

# Started with SIGINT ignored, ffn-lab leaves it so; TERM still ends it.
"$ffnlab" sweep layer_units --set permutations=99999 --set seeds=0:50 > /dev/null 2> "$work/err" &
pid=$!
sleep 1
kill -INT "$pid"
sleep 0.5
kill -0 "$pid" 2> /dev/null || { echo "a SIGINT ignored at the start ended the run"; exit 1; }
kill -TERM "$pid"
wait "$pid"
[ -z "$(ls "$work/tmp")" ] || { echo "ignored INT, then TERM: left in TMPDIR: $(ls "$work/tmp")"; exit 1; }
echo "signals: INT and TERM end the run and leave no folder behind; an ignored INT stays ignored"
