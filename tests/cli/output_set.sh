# Sourced by the --out tests, called as SCRIPT FFN_LAB WORK_FOLDER: sets
# $ffnlab, and $out inside an emptied $work.
ffnlab=$1
work=$2
out=$work/out
rm -rf "$work"
mkdir -p "$work"

# whole_set FFN_LAB OUT WHEN checks that the
# folder OUT holds one whole output set, of configs/params.json or of
# configs/abs.json (the two the tests alternate), or nothing: exactly that
# experiment's files beside its manifest, each table readable. The run
# cache OUT/runs (one whole file per finished run) is not part of the set
# and may be there in any state. On failure it prints what OUT holds, with
# WHEN, and returns 1.
whole_set() {
    ffnlab=$1
    out=$2
    when=$3
    [ -e "$out" ] || return 0
    params="params.csv params.json params.md manifest.json"
    abs="affine_fit.csv affine_fit.json affine_fit.md grid.csv grid.json grid.md jacobian.csv jacobian.json jacobian.md manifest.json worked_example.csv worked_example.json worked_example.md"
    files=$(ls "$out" | grep -vx runs | sort | tr '\n' ' ')
    if grep -q '"experiment": "param_count"' "$out/manifest.json" 2>/dev/null; then want=$params
    elif grep -q '"experiment": "abs_construction"' "$out/manifest.json" 2>/dev/null; then want=$abs
    else want=""
    fi
    want=$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')
    [ "$want" = " " ] && want=""
    if [ "$files" != "$want" ]; then
        echo "$when: $out holds '$files', expected one whole set '$want' (or nothing)"
        return 1
    fi
    for f in "$out"/*.json "$out"/*.csv; do
        [ -e "$f" ] || continue
        [ "$(basename "$f")" = manifest.json ] && continue
        "$ffnlab" diff "$f" "$f" > /dev/null 2>&1 || { echo "$when: $f does not read back"; return 1; }
    done
}
