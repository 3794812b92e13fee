#!/bin/sh
# The speed store is the user's file, but what ffn-lab prints of it is
# checked: a stored speed that makes the estimate no number is probed again,
# and the store's own words reach the terminal without their control
# characters. With no HOME (and no XDG_CACHE_HOME or FFNLAB_SPEEDS) there is
# no store, rather than one in a shared folder.
# Usage: speed_store.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
unset XDG_CACHE_HOME
FFNLAB_SPEEDS=$work/speeds.json
export FFNLAB_SPEEDS
config=configs/width_quick.json
"$ffnlab" sweep -c $config --set steps=100000 -q > /dev/null || { echo "the teaching sweep failed"; exit 1; }
grep -q seconds_per_cost "$FFNLAB_SPEEDS" || { echo "no speed was kept"; exit 1; }
# A speed of 1e308 s a unit of cost, and words with an escape sequence.
/usr/bin/env sed -i 's/"seconds_per_cost": [0-9.e+-]*/"seconds_per_cost": 1e308/; s/"from": "[^"]*"/"from": "\\u001b[31mred\\u0007"/' "$FFNLAB_SPEEDS"
out=$("$ffnlab" sweep -c $config --set steps=100000 --dry-run 2>&1) || { echo "dry run failed: $out"; exit 1; }
case "$out" in *"inf s"*) echo "an infinite estimate was printed: $out"; exit 1 ;; esac
case "$out" in *"probes of"*) ;; *) echo "the overflowing speed was not probed again: $out"; exit 1 ;; esac
# A finite speed with the escape sequence in its words: shown escaped.
/usr/bin/env sed -i 's/"seconds_per_cost": 1e308/"seconds_per_cost": 1e-09/' "$FFNLAB_SPEEDS"
out=$("$ffnlab" sweep -c $config --set steps=100000 --dry-run 2>&1) || { echo "dry run failed: $out"; exit 1; }
esc=$(printf '\033')
case "$out" in *"$esc"*) echo "the store's escape sequence reached the terminal"; exit 1 ;; esac
case "$out" in *'\x1b[31mred\x07'*) ;; *) echo "the store's words are not shown escaped: $out"; exit 1 ;; esac
# No HOME: no store, and the estimate says so.
out=$(env -u HOME -u FFNLAB_SPEEDS "$ffnlab" sweep -c $config --dry-run 2>&1) || { echo "dry run without HOME failed: $out"; exit 1; }
case "$out" in *"no HOME or XDG_CACHE_HOME to keep it in"*) ;; *) echo "without HOME: $out"; exit 1 ;; esac
echo "speed_store.sh: an overflowing speed probed again, the store's words escaped, no store without HOME"
