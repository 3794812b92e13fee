#!/bin/sh
# Set-up, build and the two jobs of the README's Quick start.
#   ./build.sh run    install missing Debian packages, build Release, run the main job
#   ./build.sh test   the same set-up, then every test through ctest (Release,
#                     then again under AddressSanitizer + UndefinedBehaviorSanitizer),
#                     and `ffn-lab check` once per kernel family the CPU has
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

# The kernel families this CPU can run, reference first: each must reproduce
# the same expected tables bit for bit.
kernel_families() {
    echo ref
    flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
    for isa in avx2 avx512; do
        case "$isa" in
            avx2) want="avx2 fma" ;;
            avx512) want="avx512f" ;;
        esac
        have=yes
        for f in $want; do
            case " $flags " in *" $f "*) ;; *) have=no ;; esac
        done
        if [ "$have" = yes ]; then echo "$isa"; else echo "build.sh: this CPU has no $isa; its check is skipped" >&2; fi
    done
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
        # Without the "long" end-to-end runs: build.sh checks every config
        # below, once per kernel family, in Release.
        ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE long
        for isa in $(kernel_families); do
            echo "build.sh: ffn-lab check with FFNLAB_ISA=$isa"
            FFNLAB_ISA=$isa ./build/ffn-lab check
        done
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
