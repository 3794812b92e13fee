#!/bin/sh
# The Debian package as a user gets it: built by cpack, unpacked into a
# fresh folder, and run from an empty folder outside any checkout with a
# HOME of its own: --version, list, the main job (the width sweep, judged),
# width_quick by name, a config of the user's whose base is a bundled config, the layer lab on
# the data the binary carries, and check --root of a small study.
# Usage: package.sh BUILD_FOLDER
set -eu
build=$(cd "$1" && pwd)
(cd "$build" && cpack -G DEB > cpack.log 2>&1) || { cat "$build/cpack.log"; exit 1; }
deb=$(ls "$build"/ffn-lab_*.deb)
dpkg-deb --field "$deb" Depends | grep -q libfmt || { echo "package.sh: $deb depends on no fmt: $(dpkg-deb --field "$deb" Depends)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/root"
mkdir -p "$work/home" "$work/here/study/configs"
cd "$work/here"
export HOME="$work/home" PATH="$work/root/usr/bin:$PATH"
unset FFNLAB_SPEEDS XDG_CACHE_HOME XDG_CONFIG_HOME FFNLAB_CACHE_KEY
[ "$(command -v ffn-lab)" = "$work/root/usr/bin/ffn-lab" ] || { echo "package.sh: ffn-lab is not the package's"; exit 1; }

ffn-lab --version | grep -q "^kernel families this CPU runs: ref" || { echo "package.sh: --version names no kernel family"; exit 1; }
ffn-lab list | grep -q "^  width_quick  *\[width_sweep\]" || { echo "package.sh: list shows no built-in width_quick"; exit 1; }
ffn-lab sweep width --check > /dev/null 2> check.txt || { echo "package.sh: the main job failed: $(cat check.txt)"; exit 1; }
grep -q "verdicts 5 pass, 0 miss, 0 n/a" check.txt || { echo "package.sh: the main job's verdicts: $(cat check.txt)"; exit 1; }
ffn-lab sweep width_quick -q > /dev/null
ffn-lab sweep layer_lab -q > /dev/null
printf '{"base": "width_quick", "seeds": [0, 1], "steps": 300}\n' > study/configs/mine.json
ffn-lab sweep study/configs/mine.json -q > /dev/null
ffn-lab check --root study --update > /dev/null
ffn-lab check --root study | grep -q "check: 1 ok, 0 differ, 0 errors" || { echo "package.sh: check --root study did not pass"; exit 1; }
echo "package.sh: $(basename "$deb") unpacked and run outside the checkout: version, list, the width sweep (5 pass), the layer lab, a derived config, check --root"
