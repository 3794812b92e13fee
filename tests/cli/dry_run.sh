#!/bin/sh
# `sweep --dry-run` and `--print-config` write nothing: no speed store, run
# cache, key or output folder appears under the user's home or the working
# folder, for a config on disk or one built into the binary, from a speed
# store that holds the kind or not.
# Usage: dry_run.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work/home" "$work/here"
printf '{"base": "width_quick", "seeds": [0, 1]}\n' > "$work/here/mine.json"
unset FFNLAB_SPEEDS XDG_CACHE_HOME XDG_CONFIG_HOME FFNLAB_CACHE_KEY
HOME=$work/home
export HOME
cd "$work/here" || exit 1
before=$(find "$work" | sort; cat mine.json)
for args in "width_quick --dry-run" "mine.json --dry-run --out results" "mine.json --print-config" \
            "width_quick --dry-run --out results --cache cache" "layer_lab --dry-run"; do
    # shellcheck disable=SC2086 # the case's words are its arguments
    "$ffnlab" sweep $args > out.txt 2>&1 || { echo "sweep $args failed: $(cat out.txt)"; exit 1; }
    rm out.txt
    after=$(find "$work" | sort; cat mine.json)
    [ "$before" = "$after" ] || { echo "sweep $args wrote: $(echo "$after" | grep -vxF "$before")"; exit 1; }
done
echo "dry_run.sh: five dry runs and a printed config wrote nothing under HOME or the working folder"
