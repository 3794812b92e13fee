#!/bin/sh
# Set-up, build and the two jobs of the README's Quick start.
#   ./build.sh run    install missing Debian packages, build Release, run the main job
#   ./build.sh test   the same set-up, then every test through ctest (GCC Release;
#                     its Debian package installed and run outside the checkout;
#                     then clang with AddressSanitizer + UndefinedBehaviorSanitizer),
#                     each fuzz harness for 15 s, and `ffn-lab check` once per
#                     kernel family the CPU has
#   ./build.sh check  the same set-up, then `ffn-lab check` over every bundled config
#   ./build.sh fuzz [SECONDS]  each libFuzzer harness for SECONDS (600), its
#                     corpus kept in build-sanitize/fuzz-corpus
#   ./build.sh figures  the same set-up, then the README's gallery: each
#                     bundled config that has one draws its figure (--plot),
#                     copied to experiments/<kind>/figures/
set -eu
cd "$(dirname "$0")"

PACKAGES="cmake ninja-build g++ make git pkg-config dpkg-dev file libcli11-dev nlohmann-json3-dev libfmt-dev libxtensor-dev \
libxtensor-blas-dev libblas-dev liblapack-dev doctest-dev libmuparser-dev libssl-dev libcpp-httplib-dev gnuplot-nox clang libclang-rt-dev"
# For the tests only: a single-node Slurm cluster (tests/cli/slurm.sh), and
# a browser with its driver for the serve page (tests/serve/browser_test.py;
# fonts-liberation is chromium's recommended font, which
# --no-install-recommends would leave out).
TEST_PACKAGES="slurm-wlm munge chromium chromium-driver python3-selenium fonts-liberation"
JOBS=$(nproc 2>/dev/null || echo 2)

# install_missing [PACKAGE...]: the Debian packages not yet installed
# ($PACKAGES when none are named).
install_missing() {
    missing=""
    for p in ${*:-$PACKAGES}; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "build.sh: installing Debian packages:$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

# Every output file but the manifest (which records the family and the
# threads) and the run cache (whose segment files are named by the writer
# that made them; the same numbers are in the per-seed tables), byte for
# byte alike from every kernel family, one thread or two, and glibc's
# non-FMA libm: the per-seed tables too, which check does not compare. The
# cases: MLPs trained on planted features, and their units' contrasts and
# ablations; the width sweep; GELU nets (smooth activations run through
# their own vectorised loops; 1000 steps, since the reference family, a
# libm call per fused multiply-add, took 67 s of CI at 5000); every GLU
# variant; firing fractions; toy models of superposition; a checkpoint's
# F16 layer with its inputs from a file.
same_files_everywhere() {
    # Longest first (32, 19, 12, 8, 4, 4 s... here), so the waves pair like with like.
    each_at_once same_files_case "configs/planted_features.json --set seeds=[0,1] --set steps=300" \
        "configs/width_quick.json" \
        "configs/width_quick.json --set activation=gelu --set seeds=[0,1,2] --set steps=1000" \
        "configs/glu_variants.json --set seeds=[0] --set steps=40 --set train_tokens=256" \
        "configs/unit_contrast.json --set seeds=[0] --set steps=300 --set permutations=199" \
        "configs/firing.json" "configs/tms_pentagon.json --set steps=300" \
        "configs/layer_units.json --set seeds=[0]" "configs/layer_lab.json"
}

# same_files_case "CONFIG ARGS...": one case of same_files_everywhere, in
# its own folder (the cases run side by side: each one's reference-family
# run is most of its time).
same_files_case() {
    out=build/same_files/$(echo "$1" | cksum | cut -d ' ' -f 1)
    rm -rf "$out"
    # The case's words are its arguments, split but not globbed ([0,1]).
    set -f
    # shellcheck disable=SC2086
    set -- $1
    set +f
    ./build/ffn-lab sweep -c "$@" --out "$out/first" -q > /dev/null
    for isa in $(kernel_families 2> /dev/null); do
        FFNLAB_ISA=$isa ./build/ffn-lab sweep -c "$@" --out "$out/$isa" -q --threads 1 > /dev/null
        diff -r --exclude=manifest.json --exclude=runs "$out/first" "$out/$isa"
    done
    GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA ./build/ffn-lab sweep -c "$@" --out "$out/libm" -q > /dev/null
    diff -r --exclude=manifest.json --exclude=runs "$out/first" "$out/libm"
    echo "build.sh: $*: the same files from $(kernel_families 2> /dev/null | tr '\n' ' ')and the non-FMA libm"
}

# Every family's check is `check --quick`: all but the configs marked long
# ("check": {"long": true}). width.json and width_neighbours.json are width
# sweeps (width_neighbours about 24 s each of nine on the scalar ref kernel)
# through the narrow kernel that width_quick.json runs everywhere.
# activations.json's 1600 nets take about 18 s with AVX2; glu_variants.json's
# 300 runs take about 40 s with AVX2 and would take about half an hour on
# the scalar ref gemm. Their arithmetic is covered across families all the
# same: width_quick.json trains ReLU nets through the same narrow kernel,
# tests/nn/test_activation.cpp compares the smooth activations bit for bit,
# and same_files_everywhere runs a GELU width sweep and a short glu_variants
# sweep on every family. The toy models of superposition train many small
# products for 10000 steps a model; same_files_everywhere runs
# tms_pentagon.json for 300 steps with every family and libm, which reaches
# the same products and the same loops. planted_features.json and
# unit_contrast.json train 80 MLPs each through the gemm like
# glu_variants.json; same_files_everywhere runs them short.

# The kernel families this CPU runs, reference first, as the binary's own
# registry (core/isa.h) finds them: `ffn-lab --version` says them.
kernel_families() {
    ./build/ffn-lab --version | sed -n 's/^kernel families this CPU runs: \([^;]*\);.*/\1/p' | tr -d ',' | tr ' ' '\n'
}

# build DIR [cmake options...]
build() {
    dir=$1
    shift
    # Ninja, not make: make compiles a target's files only once the
    # libraries it links are built, which left a core idle at each of them
    # (the sanitizer build took 7:17 with make, 6:08 with Ninja, here). A
    # folder configured for make before is configured afresh.
    if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
        rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    fi
    cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$dir" -j "$JOBS"
}

# The sanitizer build: clang, for its libFuzzer, with ASan and UBSan.
build_sanitize() {
    # A unity build, like Release: one object per file (FFNLAB_UNITY_BUILD=OFF,
    # which catches a file missing an include) costs CI three more minutes.
    # Line tables are all a sanitizer's report needs to name file and line;
    # with full debug info this build took 275 s here instead of 244.
    build build-sanitize -DCMAKE_CXX_COMPILER=clang++ -DFFNLAB_WERROR=ON -DFFNLAB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
}

# each_at_once FUNCTION ITEM...: FUNCTION ITEM for every item, $JOBS at a
# time (dash has no `wait -n`, so in waves); says which items failed and
# fails once all have run. An interrupt or a TERM stops the running ones
# and what they started (background jobs of a script ignore an interrupt).
each_at_once() {
    func=$1
    shift
    jobs_running=""  # pid:index pairs
    index=0
    failed=0
    trap 'for job in $jobs_running; do pkill -P "${job%%:*}" || true; kill "${job%%:*}" || true; done 2> /dev/null; exit 130' INT TERM
    for item in "$@"; do
        index=$((index + 1))
        "$func" "$item" &
        jobs_running="$jobs_running $!:$index"
        if [ "$(echo $jobs_running | wc -w)" -ge "$JOBS" ] || [ "$index" -eq $# ]; then
            for job in $jobs_running; do
                if ! wait "${job%%:*}"; then
                    failed=1
                    echo "build.sh: $func $(shift $((${job#*:} - 1)); echo "$1") failed" >&2
                fi
            done
            jobs_running=""
        fi
    done
    trap - INT TERM
    return "$failed"
}

# fuzz SECONDS: each harness from its seeds (tests/fuzz/corpus and the
# repo's own configs, tables and weights files) plus what earlier runs found,
# for SECONDS each, one harness a core (each is one process). A crash, a
# leak, a sanitizer report or an input slower than 10 s fails, with the
# input saved in build-sanitize/fuzz-crashes.
fuzz() {
    mkdir -p build-sanitize/fuzz-crashes
    fuzz_seconds=$1
    echo "build.sh: fuzzing each harness for $1 s, $JOBS at a time"
    each_at_once fuzz_one config safetensors checkpoint target tables readback http
}

# fuzz_one HARNESS: $fuzz_seconds of it, its output in build-sanitize/fuzz-HARNESS.log.
fuzz_one() {
    case "$1" in
        config) seeds="tests/fuzz/corpus/config configs" ;;
        safetensors) seeds="tests/io/fixtures tests/experiments/fixtures tests/nn/fixtures/layers/gpt2_bf16 tests/nn/fixtures/layers/gpt_neox_f16" ;;
        checkpoint) seeds="tests/fuzz/corpus/checkpoint" ;;
        target) seeds="tests/fuzz/corpus/target" ;;
        tables) seeds="tests/fuzz/corpus/tables $(ls -d experiments/*/expected)" ;;
        readback) seeds="tests/fuzz/corpus/readback" ;;
        http) seeds="tests/fuzz/corpus/http" ;;
    esac
    corpus=build-sanitize/fuzz-corpus/$1
    log=build-sanitize/fuzz-$1.log
    mkdir -p "$corpus"
    status=0
    ./build-sanitize/tests/fuzz/fuzz_$1 -max_total_time="$fuzz_seconds" -timeout=10 -print_final_stats=1 \
        -dict=tests/fuzz/json.dict -artifact_prefix=build-sanitize/fuzz-crashes/ \
        "$corpus" $seeds >"$log" 2>&1 || status=$?
    echo "build.sh: fuzz_$1: $(grep -E '^(Done|stat::number_of_executed_units)' "$log" | tr '\n' ' ')"
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log" >&2
        echo "build.sh: fuzz_$1 failed (exit $status): the log is $log, a failing input in build-sanitize/fuzz-crashes" >&2
        return 1
    fi
}

case "${1:-}" in
    run)
        install_missing
        # The flags of `test` (warnings as errors included), less the tests:
        # `test` after `run` then compiles only the tests, not the tree again.
        build build -DFFNLAB_WERROR=ON -DFFNLAB_TESTS=OFF
        ./build/ffn-lab sweep --config configs/width.json
        ;;
    test)
        install_missing $PACKAGES $TEST_PACKAGES
        # Installed, so the Slurm and browser tests must run rather than skip.
        export FFNLAB_REQUIRE_SLURM=1 FFNLAB_REQUIRE_BROWSER=1
        # The checks below run families and a libm slower than the machine's
        # best: what they measure is no speed for the user's estimates.
        export FFNLAB_SPEEDS="$PWD/build/test_speeds.json"
        build build -DFFNLAB_WERROR=ON -DFFNLAB_TESTS=ON
        ctest --test-dir build --output-on-failure -j "$JOBS"
        sh tests/cli/package.sh build
        build_sanitize
        # Without the "long" end-to-end runs (the label of CLI tests, "[long]"
        # in a unit test's name): they ran in Release above, and the checks
        # below run every config once per kernel family.
        ctest --test-dir build-sanitize --output-on-failure -j "$JOBS" -LE long -E '\[long\]'
        # A smoke run of each harness, to keep CI under its 20 minutes;
        # `./build.sh fuzz` is the long run.
        fuzz 15
        # ctest's cli_check_config_* cases ran `ffn-lab check` on every config
        # with the best family; here the other families, on all but the long
        # trainers (--quick; width_quick covers the width sweep's kernels).
        best=$(kernel_families 2> /dev/null | tail -1)
        for isa in $(kernel_families); do
            [ "$isa" = "$best" ] && continue
            echo "build.sh: ffn-lab check with FFNLAB_ISA=$isa"
            FFNLAB_ISA=$isa ./build/ffn-lab check --quick
        done
        # glibc picks FMA versions of exp, log, sin, cos, pow... on CPUs that
        # have FMA, which can differ from the others in the last bit; no
        # result may use them (lib/core/math.h). Check the tables with the
        # versions a CPU without FMA or AVX2 would get.
        echo "build.sh: ffn-lab check with glibc's libm as on a CPU without FMA"
        GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA ./build/ffn-lab check --quick
        same_files_everywhere
        ;;
    check)
        install_missing
        build build -DFFNLAB_WERROR=ON -DFFNLAB_TESTS=OFF
        ./build/ffn-lab check
        ;;
    figures)
        install_missing
        build build -DFFNLAB_WERROR=ON -DFFNLAB_TESTS=OFF
        # config, the figures it draws for the gallery, their kind's folder
        while read -r config names kind; do
            out=build/figures/$config
            rm -rf "$out"
            ./build/ffn-lab sweep "$config" -q --plot "$out" > /dev/null
            mkdir -p "experiments/$kind/figures"
            for name in $(echo "$names" | tr , ' '); do
                cp "$out/$name.png" "experiments/$kind/figures/$name.png"
                echo "build.sh: experiments/$kind/figures/$name.png from configs/$config.json"
            done
        done <<'FIGURES'
width rmse,ramps width_sweep
tms_pentagon columns toy_superposition
tms_features norms toy_superposition
tms_geometry dimensionality toy_superposition
tms_phase phase_diagram toy_superposition
planted_features init_vs_trained planted_features
unit_contrast contrasts unit_contrast
FIGURES
        ;;
    fuzz)
        seconds=${2:-600}
        # libFuzzer reads 0 (and anything it cannot parse) as "no limit".
        case "$seconds" in
            '' | *[!0-9]* | 0) echo "build.sh: fuzz takes a number of seconds above 0, got '$seconds'" >&2; exit 2 ;;
        esac
        install_missing
        build_sanitize
        fuzz "$seconds"
        ;;
    *)
        echo "usage: ./build.sh run|test|check|figures|fuzz [SECONDS]" >&2
        exit 2
        ;;
esac
