#!/bin/sh
# check in a user's own study folder (runner/check.h): configs/ holds the
# user's configs (here one whose base is a bundled config), the first
# check names the missing expected table, --update creates it in expected/,
# the next check passes, and an edited expected cell is a difference.
# Usage: study.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
rm -rf "$work"
mkdir -p "$work/study/configs"
printf '{"base": "abs", "description": "a regression test of my own"}\n' > "$work/study/configs/mine.json"
cd "$work" || exit 1

out=$("$ffnlab" check --root study 2>&1); code=$?
[ "$code" = 2 ] || { echo "no expected table: exit $code, not 2"; exit 1; }
case "$out" in *"study/expected/mine.json: no expected table (run \`ffn-lab check --root study --update study/configs/mine.json\`"*) ;;
    *) echo "no expected table: the message does not say how to create it: $out"; exit 1 ;; esac

"$ffnlab" check --root study --update > /dev/null || { echo "check --update failed"; exit 1; }
[ -f study/expected/mine.json ] || { echo "check --update wrote no study/expected/mine.json"; exit 1; }
out=$("$ffnlab" check --root study) || { echo "check after --update failed: $out"; exit 1; }
case "$out" in *"check: 1 ok, 0 differ, 0 errors"*) ;; *) echo "check after --update: $out"; exit 1 ;; esac

# One cell of the expected table changed: check says which, exit 1.
# (A row is a line of cells in column order: the first row of the float64
# trace is input x = (-2, 3).)
sed '0,/"float64","x","(-2, 3)"/s//"float64","x","(-2, 4)"/' study/expected/mine.json > study/expected/mine.json.new &&
    mv study/expected/mine.json.new study/expected/mine.json
out=$("$ffnlab" check --root study); code=$?
[ "$code" = 1 ] || { echo "an edited expected cell: exit $code, not 1"; exit 1; }
case "$out" in *"column 'value': A=(-2, 3) B=(-2, 4)"*) ;; *) echo "an edited expected cell is not named: $out"; exit 1 ;; esac
# The config changed since its table was written: check leads with a
# summary, then the keys that changed; run ids are not listed as cells.
grep -q '"config": {' study/expected/mine.json || { echo "the expected table records no config"; exit 1; }
"$ffnlab" check --root study --update > /dev/null || { echo "check --update failed"; exit 1; }
printf '{"base": "abs", "description": "a regression test of my own", "x": [-2, 4]}\n' > study/configs/mine.json
out=$("$ffnlab" check --root study); code=$?
[ "$code" = 1 ] || { echo "a changed config: exit $code, not 1"; exit 1; }
first=$(echo "$out" | sed -n 2p)
case "$first" in *" cells differ in "*" rows of "*" tables ("*" tables compared)"*) ;; *) echo "check does not lead with a summary: $out"; exit 1 ;; esac
case "$out" in *"the config changed since the expected table was written: x (none) -> [-2,4]"*) ;;
    *) echo "check does not name the changed key: $out"; exit 1 ;; esac
case "$out" in *"column 'run_id'"*) echo "check lists run ids as cells: $out"; exit 1 ;; esac
# --update says what it replaced: the changes and the config's, or nothing.
out=$("$ffnlab" check --root study --update) || { echo "check --update of a changed config failed: $out"; exit 1; }
case "$out" in *"wrote study/expected/mine.json replacing: "*" cells differ in "*"the config changed since the replaced table was written: x (none) -> [-2,4]"*) ;;
    *) echo "check --update does not say what it replaced: $out"; exit 1 ;; esac
out=$("$ffnlab" check --root study --update) || { echo "check --update, again, failed: $out"; exit 1; }
case "$out" in *"wrote study/expected/mine.json (unchanged)"*) ;; *) echo "a second --update does not say it changed nothing: $out"; exit 1 ;; esac

echo "study.sh: missing, created, passing and differing expected tables in a study folder; a changed config named; updates say what they replaced"
