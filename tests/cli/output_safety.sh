#!/bin/bash
# What ffn-lab may write and delete: one case per class of the hostile
# review of the output folders (the README's "What ffn-lab owns"). Each
# case sets up a folder, runs ffn-lab and asserts its exit code, its one
# line on stderr and what is left on disk. Nothing of the user's may be
# lost, nothing written outside the place the user named.
# Usage: output_safety.sh FFN_LAB WORK_FOLDER (run from the checkout)
set -u
ffnlab=$(realpath "$1")
work=$2
umount "$work/c4/full" 2> /dev/null  # a tmpfs an interrupted run left mounted
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
held=0
failed=0

# ok NAME: the case held; bad NAME WHY: it did not.
ok() { held=$((held + 1)); }
bad() { failed=$((failed + 1)); echo "FAILED $1: $2"; }

# run EXPECTED_EXIT NAME ARGS...: runs ffn-lab, stderr in $work/err; checks
# the exit code and that stderr is one line with no "internal error".
run() {
    want=$1
    name=$2
    shift 2
    "$ffnlab" "$@" > "$work/stdout" 2> "$work/err"
    got=$?
    if [ "$got" -ne "$want" ]; then bad "$name" "exit $got, expected $want: $(head -c 300 "$work/err")"; return 1; fi
    if grep -q "internal error" "$work/err"; then bad "$name" "internal error: $(cat "$work/err")"; return 1; fi
    if [ "$want" -eq 2 ] && [ "$(wc -l < "$work/err")" -ne 1 ]; then bad "$name" "not one line on stderr: $(cat "$work/err")"; return 1; fi
    return 0
}
# says NAME REGEX: stderr matches.
says() { grep -Eq "$2" "$work/err" || { bad "$1" "stderr '$(cat "$work/err")' does not match '$2'"; return 1; }; }

P=configs/params.json
A=configs/abs.json

# --- 1. data loss through --out -------------------------------------------
d=$work/c1
for shape in foreign garbage folder; do
    rm -rf "$d"; mkdir -p "$d"
    echo "my notes" > "$d/notes.txt"
    case $shape in
        foreign) echo '{"tool": "another", "config_file": "x"}' > "$d/manifest.json" ;;
        garbage) printf 'not json at all' > "$d/manifest.json" ;;
        folder) mkdir "$d/manifest.json" ;;
    esac
    run 2 "1: a $shape manifest.json" sweep -c $P -q --out "$d" && says "1: $shape" "not a folder ffn-lab wrote|did not write" &&
        [ "$(cat "$d/notes.txt")" = "my notes" ] && ok || bad "1: $shape" "notes.txt lost"
done
rm -rf "$d"
run 0 "1: first set" sweep -c $P -q --out "$d" && ok
echo "my notes" > "$d/notes.md"
mkdir "$d/mine" && echo x > "$d/mine/plot.png"
run 2 "1: a user's file in the set" sweep -c $P -q --out "$d" && says "1: user file" "mine/, notes.md" &&
    [ -f "$d/notes.md" ] && [ -f "$d/mine/plot.png" ] && [ -f "$d/params.csv" ] && ok || bad "1: user file" "a file lost"
rm -rf "$d"
# Weights and figures inside --out join the set, and a rerun replaces them.
run 0 "1: weights inside --out" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d" --save-weights "$d/weights" &&
    ls "$d"/weights/*_final.safetensors > /dev/null 2>&1 && grep -q '"weights/' "$d/manifest.json" && ok ||
    bad "1: weights inside --out" "no weights in the set: $(ls -R "$d" | head -20)"
run 0 "1: weights inside --out, again" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d" --save-weights "$d/weights" &&
    ls "$d"/weights/*_final.safetensors > /dev/null 2>&1 && ok || bad "1: weights again" "weights gone: $(ls -R "$d" | head)"

# A file the user puts into the folder while a sweep runs (here a stand-in
# gnuplot, drawing figures inside the set, writes it) is not deleted with
# the old set: the old folder is kept beside, as OUT.kept-TIME, and the
# run says so.
rm -rf "$d" "$d".kept-*
mkdir -p "$work/bin1"
cat > "$work/bin1/gnuplot" <<'SH'
#!/bin/sh
while read -r line; do
    case "$line" in "set output '"*) f=${line#set output \'}; : > "${f%\'}" ;; esac
done
echo "written mid-run" > "$USER_FILE"
SH
chmod +x "$work/bin1/gnuplot"
run 0 "1: mid-run, first set" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d" && ok
USER_FILE=$d/notes.txt PATH="$work/bin1:$PATH" "$ffnlab" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d" --plot "$d/figs" \
    > /dev/null 2> "$work/err"
e=$?
kept=$(ls -d "$d".kept-* 2> /dev/null | head -1)
[ $e -eq 0 ] && [ -n "$kept" ] && [ "$(cat "$kept/notes.txt" 2> /dev/null)" = "written mid-run" ] && grep -q "kept in" "$work/err" &&
    [ -f "$d/figs/fits.svg" ] && ok || bad "1: a file added mid-run" "exit $e, kept '$kept': $(cat "$work/err")"
# A file of the lock's name that ffn-lab did not write is neither used nor removed.
rm -rf "$d" "$d".kept-*
echo "my own notes" > "$work/.c1.lock"
run 2 "1: a foreign .lock file" sweep -c $P -q --out "$d" && says "1: lock" "not a lock file ffn-lab wrote" &&
    [ "$(cat "$work/.c1.lock")" = "my own notes" ] && ok || bad "1: lock" "the user's .c1.lock changed"
rm -f "$work/.c1.lock"

# --- 2. two configs into one new --out, at once ---------------------------
d=$work/c2
trial=0
while [ $trial -lt 12 ]; do
    rm -rf "$d"
    "$ffnlab" sweep -c configs/smoke/width_small.json -q --out "$d" > /dev/null 2> "$work/a.err" &
    a=$!
    "$ffnlab" sweep -c $A -q --out "$d" > /dev/null 2> "$work/b.err" &
    b=$!
    wait $a; ea=$?
    wait $b; eb=$?
    if [ "$((ea + eb))" -ne 2 ] || { [ $ea -ne 0 ] && [ $eb -ne 0 ]; }; then
        bad "2: trial $trial" "exits $ea and $eb, expected one 0 and one 2: $(cat "$work/a.err" "$work/b.err")"
    elif [ $ea -eq 0 ] && ! grep -q "width_small" "$d/manifest.json"; then bad "2: trial $trial" "the winner's set is not in $d"
    elif [ $eb -eq 0 ] && ! grep -q "abs_construction" "$d/manifest.json"; then bad "2: trial $trial" "the winner's set is not in $d"
    elif ! grep -qE "being written by|holds the tables of" "$work/a.err" "$work/b.err"; then bad "2: trial $trial" "the loser does not say why"
    else ok
    fi
    trial=$((trial + 1))
done
# The same config twice at once: both succeed, the later waits.
rm -rf "$d"
"$ffnlab" sweep -c $P -q --out "$d" > /dev/null 2> "$work/a.err" & a=$!
"$ffnlab" sweep -c $P -q --out "$d" > /dev/null 2> "$work/b.err" & b=$!
wait $a && wait $b && ok || bad "2: same config" "$(cat "$work/a.err" "$work/b.err")"

# --- 3. symlinks ----------------------------------------------------------
d=$work/c3
mkdir -p "$d/real" "$d/elsewhere"
ln -s real "$d/link"
run 0 "3: --out a symlink" sweep -c $P -q --out "$d/link" && [ -L "$d/link" ] && [ -f "$d/real/params.csv" ] && ok ||
    bad "3: --out symlink" "the link was replaced or the set is not in its target"
rm -rf "$d/set"
run 0 "3: set" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d/set" && ok
rm -rf "$d/set/runs" && ln -s ../elsewhere "$d/set/runs"
run 2 "3: a planted runs symlink" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d/set" && says "3: runs" "symlink" &&
    [ -z "$(ls "$d/elsewhere")" ] && ok || bad "3: runs symlink" "files written through the link: $(ls "$d/elsewhere")"
# A shard's folder: only shard.json and runs/, and never through a link.
mkdir -p "$d/shard" "$d/elsewhere2"
echo x > "$d/shard/notes.txt"
ln -s ../elsewhere2 "$d/shard/runs"
run 2 "3: a shard folder with a user's file and a runs link" sweep -c $P -q --shard 1/1 --out "$d/shard" &&
    says "3: shard" "notes.txt.*runs \(a symlink\)|runs \(a symlink\).*notes.txt" && [ -z "$(ls "$d/elsewhere2")" ] &&
    [ ! -e "$d/shard/shard.json" ] && ok || bad "3: shard" "wrote into the folder or through the link"
# check --update never writes through a symlinked expected/ folder.
root=$d/root
mkdir -p "$root/configs" "$root/experiments/param_count" "$d/outside"
cp $P "$root/configs/"
ln -s "$d/outside" "$root/experiments/param_count/expected"
# (check reports each config on stdout, and exits 2 when one is in error.)
"$ffnlab" check --root "$root" --update > "$work/stdout" 2>&1
e=$?
[ $e -eq 2 ] && grep -q "expected: a symlink" "$work/stdout" && [ -z "$(ls "$d/outside")" ] && ok ||
    bad "3: check --update" "exit $e, wrote through the link: $(ls "$d/outside") $(cat "$work/stdout")"

# --- 4. paths and files that once ended in "internal error" ----------------
d=$work/c4
mkdir -p "$d"
long=$(printf 'n%.0s' $(seq 300))
ln -s loop "$d/loop"
run 2 "4: -c name too long" sweep -c "$d/$long.json" && ok
run 2 "4: -c symlink loop" sweep -c "$d/loop" && ok
run 2 "4: --out name too long" sweep -c $P -q --out "$d/$long" && ok
run 2 "4: --out inside a loop" sweep -c $P -q --out "$d/loop/x" && ok
run 2 "4: merge a loop" merge "$d/loop" && ok
run 2 "4: check --root a loop" check --root "$d/loop" && ok
run 2 "4: check --root too long" check --root "$d/$long" && ok
echo "{\"experiment\": \"param_count\", \"base\": \"$long.json\"}" > "$d/base_long.json"
run 2 "4: base too long" sweep -c "$d/base_long.json" && ok
echo '{"experiment": "param_count", "base": "loop"}' > "$d/base_loop.json"
run 2 "4: base a loop" sweep -c "$d/base_loop.json" && ok
rm -rf "$d/typed" && mkdir "$d/typed"
echo '{"config_file": 5, "experiment": "param_count"}' > "$d/typed/manifest.json"
run 2 "4: a manifest field of the wrong type" sweep -c $P -q --out "$d/typed" && ok
cat > "$d/two_types.json" <<'JSON'
{"experiment": "param_count", "zip": {"d": [512], "m": [2048]}, "expect": [
  {"table": "params", "where": {"d": 512, "m": 2048}, "values": {"ffn_weights": 1}},
  {"table": "params", "where": {"d": 512, "m": 2048}, "values": {"ffn_weights": "x"}}]}
JSON
run 2 "4: expect giving a column two types" sweep -c "$d/two_types.json" -q && says "4: two types" "another expectation" && ok
# A run-cache entry with an extra column is no entry: the run is computed.
rm -rf "$d/cache"
run 0 "4: cache" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d/cache" && ok
for f in "$d"/cache/runs/*.json; do
    sed -i 's/"columns":\[/"columns":[{"name":"extra","type":"int"},/' "$f"
done
run 0 "4: a cache entry with an extra column" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --out "$d/cache" && ok

# A FIFO where a folder is named: refused, never opened (it would block).
mkfifo "$d/fifo"
run 2 "4: --out a FIFO" sweep -c $P -q --out "$d/fifo" && ok
run 2 "4: --cache a FIFO" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --cache "$d/fifo" && ok
run 2 "4: --plot a FIFO" sweep -c configs/smoke/width_small.json -q --set 'seeds=[0]' --plot "$d/fifo" && ok
# A full disk (a 32 KiB tmpfs, where this machine lets the test mount one):
# one line, and the folder holds no partial set (finished runs may stay in
# its runs/, which a rerun reuses).
mkdir -p "$d/full"
if mount -t tmpfs -o size=32k tmpfs "$d/full" 2> /dev/null; then
    run 2 "4: a full disk" sweep -c configs/smoke/width_small.json -q --out "$d/full/out" && says "4: full disk" "No space left" &&
        [ -z "$(ls -A "$d/full/out" 2> /dev/null | grep -vx runs)" ] && [ -z "$(ls -A "$d/full" | grep -v '^out$')" ] && ok ||
        bad "4: full disk" "left behind: $(ls -AR "$d/full" | head)"
    umount "$d/full"
else
    echo "4: a full disk: skipped (no tmpfs can be mounted here)"
fi

# --- 5. crashes -----------------------------------------------------------
d=$work/c5
mkdir -p "$d/bin"
ln -sf "$(command -v env)" "$d/bin/env"
PATH=$d/bin "$ffnlab" sweep -c configs/smoke/width_small.json -q --plot "$d/plots" > /dev/null 2> "$work/err"
e=$?
[ $e -eq 2 ] && grep -q "gnuplot" "$work/err" && ok || bad "5: no gnuplot" "exit $e: $(cat "$work/err")"
# An address-space limit: a plan too large for it is one line, not an abort.
if [ -z "${FFNLAB_SANITIZED:-}" ]; then
    (ulimit -v 800000; "$ffnlab" sweep -c configs/width.json --set 'seeds=0:1000000' --dry-run > /dev/null 2> "$work/err")
    e=$?
    [ $e -eq 2 ] && grep -q "memory limit" "$work/err" && ok || bad "5: memory limit" "exit $e: $(head -c 300 "$work/err")"
else
    echo "5: an address-space limit: skipped under AddressSanitizer"
fi

# --- 6. stdout lost with exit 0 -------------------------------------------
"$ffnlab" sweep -c $P -q > /dev/full 2> "$work/err"
e=$?
[ $e -eq 2 ] && grep -q "stdout" "$work/err" && ok || bad "6: /dev/full" "exit $e: $(cat "$work/err")"
"$ffnlab" sweep -c $P -q >&- 2> "$work/err"
e=$?
[ $e -eq 2 ] && grep -q "stdout" "$work/err" && ok || bad "6: closed stdout" "exit $e: $(cat "$work/err")"
# A reader that goes (head) is named as such: 10,000 rows overrun the pipe.
{ "$ffnlab" sweep -c configs/width.json --set 'seeds=0:2000' -f csv --table runs -q 2> "$work/err"; echo $? > "$work/rc"; } | head -n 1 > /dev/null
e=$(cat "$work/rc")
[ "$e" -eq 2 ] && grep -q "stdout: the reader closed the pipe before the end" "$work/err" && ok || bad "6: reader gone" "exit $e: $(cat "$work/err")"

# --- 7. hangs -------------------------------------------------------------
d=$work/c7
mkdir -p "$d/bin"
printf '#!/bin/sh\nexec sleep 1000\n' > "$d/bin/gnuplot"
chmod +x "$d/bin/gnuplot"
start=$(date +%s)
FFNLAB_CHILD_TIMEOUT=2 PATH="$d/bin:$PATH" "$ffnlab" sweep -c configs/smoke/width_small.json --set 'seeds=[0]' -q --plot "$d/plots" > /dev/null 2> "$work/err"
e=$?
[ $e -eq 2 ] && [ $(($(date +%s) - start)) -lt 30 ] && grep -q "gnuplot" "$work/err" && ok ||
    bad "7: a gnuplot that never returns" "exit $e after $(($(date +%s) - start)) s: $(cat "$work/err")"

# --- 9. smaller ones ------------------------------------------------------
d=$work/c9
mkdir -p "$d"
run 2 "9: control characters" sweep -c "$d/$(printf 'a\033[31mred\007\nb')" && ! grep -q "$(printf '\033')" "$work/err" && ok
run 2 "9: --shard ''" sweep -c configs/smoke/width_small.json -q --shard '' --out "$d/shard" && ok
run 0 "9: --out DIR/" sweep -c $P -q --out "$d/slash/" && [ -f "$d/slash/params.csv" ] && ok
mkdir -p "$d/.slash.staging-abc123" && echo x > "$d/.slash.staging-abc123/params.md"
run 0 "9: a killed run's staging folder" sweep -c $P -q --out "$d/slash" && [ ! -e "$d/.slash.staging-abc123" ] && ok ||
    bad "9: staging" "the killed run's staging folder is still there"
# A run refused as it runs (a NaN input, found only when read) leaves none
# of the folders the sweep made: not --out, its runs/, nor their parents.
run 2 "9: a run refused at run time" sweep -c configs/layer_lab.json -q --set inputs=tests/cli/bad/inputs_nan.safetensors \
    --out "$d/refused/deep/out" && says "9: refused" "row 3 holds nan" && { [ ! -e "$d/refused" ] && ok ||
    bad "9: refused" "left behind: $(find "$d/refused" | head -5 | tr '\n' ' ')"; }
rm -rf "$d/mode"
(umask 022; "$ffnlab" sweep -c $P -q --out "$d/mode" > /dev/null)
[ "$(stat -c %a "$d/mode")" = 755 ] && ok || bad "9: umask" "the folder is mode $(stat -c %a "$d/mode"), umask 022 gives 755"

# No run above was killed: none may leave its lock file behind.
left=$(find "$work" -name '.*.lock')
[ -z "$left" ] && ok || bad "locks" "lock files left behind: $left"

echo "output safety: $held of $((held + failed)) cases held"
[ $failed -eq 0 ]
