#!/bin/sh
# Set-up, build and the two jobs of the README's Quick start.
#   ./build.sh run    install missing Debian packages, build Release, run the main job
#   ./build.sh test   the same set-up, then every test through ctest (Release,
#                     then again under AddressSanitizer + UndefinedBehaviorSanitizer)
#   ./build.sh check  the same set-up, then `ffn-lab check` over every bundled config
set -eu
cd "$(dirname "$0")"

PACKAGES="cmake g++ make git pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev libxtensor-dev \
libxtensor-blas-dev libblas-dev liblapack-dev doctest-dev libmuparser-dev gnuplot-nox"
JOBS=$(nproc 2>/dev/null || echo 2)

install_missing() {
    missing=""
    for p in $PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "build.sh: installing Debian packages:$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

# build DIR [cmake options...]
build() {
    dir=$1
    shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS"
}

case "${1:-}" in
    run)
        install_missing
        build build
        ./build/ffn-lab sweep --config configs/width.json
        ;;
    test)
        install_missing
        build build -DFFNLAB_WERROR=ON
        ctest --test-dir build --output-on-failure -j "$JOBS"
        build build-asan -DFFNLAB_WERROR=ON -DFFNLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
        ctest --test-dir build-asan --output-on-failure -j "$JOBS"
        ;;
    check)
        install_missing
        build build
        ./build/ffn-lab check
        ;;
    *)
        echo "usage: ./build.sh run|test|check" >&2
        exit 2
        ;;
esac
