#!/bin/sh
# Folders the user may not enter are named as such: a study whose configs/
# cannot be read is not "no such config", and `results` over a tree with
# such a folder names that folder, not the root above it. Root reads every
# folder, so as root the commands run as the user nobody.
# All in a folder of /tmp with a copy of the binary (it carries its
# configs), so that nobody can reach them wherever the build is.
# Usage: unreadable.sh FFN_LAB
set -u
work=$(mktemp -d)
mkdir -p "$work/study/configs" "$work/study/experiments" "$work/tree/locked/inner" "$work/home"
cp "$1" "$work/ffn-lab"
ffnlab=$work/ffn-lab
cp configs/smoke/width_small.json "$work/study/configs/"
chmod -R a+rwX "$work"
as=""
[ "$(id -u)" = 0 ] && as="setpriv --reuid=nobody --regid=nogroup --clear-groups"
chmod 000 "$work/study/configs" "$work/tree/locked"
trap 'chmod -R u+rwX "$work"; rm -rf "$work"' EXIT

out=$(cd "$work/study" && $as env HOME="$work/home" "$ffnlab" sweep width_small -q 2>&1); rc=$?
[ "$rc" = 2 ] || { echo "sweep in a study with unreadable configs/: exit $rc: $out"; exit 1; }
[ "$out" = "ffn-lab: configs/width_small: Permission denied (a folder on its path cannot be read)" ] ||
    { echo "sweep in a study with unreadable configs/ says: $out"; exit 1; }

out=$($as env HOME="$work/home" "$ffnlab" results "$work/tree" 2>&1); rc=$?
[ "$rc" = 2 ] || { echo "results over an unreadable folder: exit $rc: $out"; exit 1; }
[ "$out" = "ffn-lab: $work/tree/locked: Permission denied" ] || { echo "results over an unreadable folder says: $out"; exit 1; }
echo "unreadable.sh: an unreadable config folder and result folder are named, with exit 2"
