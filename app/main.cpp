// ffn-lab: the command-line front end. CLI wiring only; every computation
// lives in lib/ and experiments/.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>

#include "cmd_bench.h"
#include "cmd_slurm.h"
#include "cmd_check.h"
#include "cmd_diff.h"
#include "cmd_list.h"
#include "cmd_sweep.h"
#include "core/error.h"
#include "ffnlab/build_info.h"
#include "gemm/gemm.h"
#include "runner/schema.h"

int main(int argc, char** argv) {
    using namespace ffn::app;
    CLI::App app{"ffn-lab: experiments on the transformer feed-forward (MLP) layer"};
    app.set_version_flag("--version", std::string("ffn-lab ") + ffn::build::version +
                                          (*ffn::build::git_commit ? std::string(" (") + ffn::build::git_commit + ")" : ""));
    app.require_subcommand(1);

    SweepOptions sweep, merge;
    ListOptions list;
    DiffOptions diff;
    CheckOptions check;
    BenchOptions bench;
    SlurmOptions slurm;
    auto* sweep_cmd = setup_sweep(app, sweep);
    auto* merge_cmd = setup_merge(app, merge);
    auto* list_cmd = setup_list(app, list);
    auto* diff_cmd = setup_diff(app, diff);
    auto* check_cmd = setup_check(app, check);
    auto* bench_cmd = setup_bench(app, bench);
    auto* slurm_cmd = setup_slurm(app, slurm);

    // A bare --out asks for the default folder, and CLI11 hands both it and
    // `--out ""` over as an empty value: an empty path is refused here.
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--out=" || arg == "-o=" || ((arg == "--out" || arg == "-o") && i + 1 < argc && argv[i + 1][0] == '\0')) {
            std::cerr << "ffn-lab: --out: an empty path\n";
            return static_cast<int>(ffn::ExitCode::bad_input);
        }
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A misspelt subcommand: name the one that was meant.
        if (argc > 1 && argv[1][0] != '-' && app.get_subcommands({}).size() > 0) {
            std::vector<std::string> names;
            for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
            if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
                const auto guess = ffn::runner::did_you_mean(argv[1], names);
                std::cerr << "ffn-lab: unknown command '" << argv[1] << "'"
                          << (guess ? " (did you mean '" + *guess + "'?)" : std::string()) << "; see ffn-lab --help\n";
                return static_cast<int>(ffn::ExitCode::bad_input);
            }
        }
        std::cerr << "ffn-lab: " << e.what() << " (see ffn-lab --help)\n";
        return static_cast<int>(ffn::ExitCode::bad_input);
    }

    // A misspelt cap would otherwise run on the best kernels without a word.
    if (const char* cap = ffn::gemm::unknown_isa_cap()) {
        std::cerr << "ffn-lab: FFNLAB_ISA=" << cap << ": expected ref, avx2 or avx512\n";
        return static_cast<int>(ffn::ExitCode::bad_input);
    }

    try {
        if (sweep_cmd->parsed()) return run_sweep(sweep);
        if (merge_cmd->parsed()) return run_sweep(merge);
        if (slurm_cmd->parsed()) return run_slurm(slurm);
        if (list_cmd->parsed()) return run_list(list);
        if (diff_cmd->parsed()) return run_diff(diff);
        if (check_cmd->parsed()) return run_check(check);
        if (bench_cmd->parsed()) return run_bench(bench, argv);
    } catch (const ffn::Error& e) {
        std::cerr << "ffn-lab: " << e.what() << "\n";
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::cerr << "ffn-lab: internal error: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
