// ffn-lab: the command-line front end. It sets up each subcommand, parses,
// and turns every refusal into one line on stderr and an exit code; every
// computation and every rule about files lives in lib/ and experiments/.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "cmd_bench.h"
#include "cmd_slurm.h"
#include "cmd_check.h"
#include "cmd_diff.h"
#include "cmd_list.h"
#include "cmd_merge.h"
#include "cmd_results.h"
#include "cmd_serve.h"
#include "common.h"
#include "cmd_sweep.h"
#include "core/error.h"
#include "ffnlab/build_info.h"
#include "core/isa.h"
#include "core/memory.h"
#include "report/text.h"
#include "runner/schema.h"

namespace {

int fail(const std::string& message, int code = static_cast<int>(ffn::ExitCode::bad_input)) {
    std::cerr << "ffn-lab: " << ffn::report::printable(message) << "\n";
    return code;
}

// A closed stdin, stdout or stderr would be handed to the next file opened
// (a lock file, a table) and what was printed would land in it: each is
// held by /dev/null, stdout by /dev/full, so that printing to a closed
// stdout fails like a full disk. True when stdout was closed.
bool hold_standard_streams() {
    bool stdout_closed = false;
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        if (fd == STDOUT_FILENO) stdout_closed = true;
        const int held = ::open(fd == STDOUT_FILENO ? "/dev/full" : "/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (held >= 0 && held != fd) {
            ::dup2(held, fd);
            ::close(held);
        }
    }
    return stdout_closed;
}

// The tables reached stdout, or one line says they did not (a full disk,
// a closed pipe or descriptor): never lost with exit 0.
int finish_stdout(int code, bool stdout_closed) {
    errno = 0;
    std::cout.flush();
    const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
    if (!failed) return code;
    // A pipe whose reader has gone (`| head`) says so on poll: named as what
    // happened, not as a failed write.
    struct stat st {};
    pollfd out{STDOUT_FILENO, 0, 0};
    const bool reader_gone = ::fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode) && ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR);
    if (reader_gone) return fail("stdout: the reader closed the pipe before the end (as `head` does); the rest was not written");
    const std::string why = stdout_closed ? "it is closed" : errno ? std::strerror(errno) : "a write failed";
    return fail("stdout: the output could not be written (" + why + ")");
}

// What a bug report needs: the version, the commit, the build type, the
// kernel families this CPU runs and the one in use (FFNLAB_ISA caps it).
std::string version_text() {
    std::string families;
    for (const ffn::Isa isa : ffn::supported_isas()) families += std::string(families.empty() ? "" : ", ") + ffn::isa_name(isa);
    return std::string("ffn-lab ") + ffn::build::version + (*ffn::build::git_commit ? std::string(" (") + ffn::build::git_commit + ")" : "") +
           "\nbuild type: " + ffn::build::build_type + "\nkernel families this CPU runs: " + families +
           "; in use: " + ffn::isa_name(ffn::active_isa());
}

}  // namespace

int main(int argc, char** argv) {
    using namespace ffn::app;
    const bool stdout_closed = hold_standard_streams();
    // A reader that has gone (gnuplot, a pipe's other end) is an error
    // to report, not a signal that ends ffn-lab without a word.
    std::signal(SIGPIPE, SIG_IGN);
    end_on_signals();
    ffn::keep_freed_memory();
    CLI::App app{"ffn-lab: experiments on the transformer feed-forward (MLP) layer"};
    app.set_version_flag("--version", version_text());
    app.require_subcommand(1);

    SweepOptions sweep;
    MergeOptions merge;
    ListOptions list;
    DiffOptions diff;
    ResultsOptions results;
    CheckOptions check;
    ServeOptions serve;
    BenchOptions bench;
    SlurmOptions slurm;
    auto* sweep_cmd = setup_sweep(app, sweep);
    auto* merge_cmd = setup_merge(app, merge);
    auto* list_cmd = setup_list(app, list);
    auto* diff_cmd = setup_diff(app, diff);
    auto* results_cmd = setup_results(app, results);
    auto* check_cmd = setup_check(app, check);
    auto* serve_cmd = setup_serve(app, serve);
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
    } catch (const CLI::ExtrasError& e) {
        // Hydra's `app cfg key=value`: an argument left over that looks
        // like an override is one, given as --set key=value here.
        const std::string what = e.what();
        const auto colon = what.find(": ");
        std::string extras = colon == std::string::npos ? "" : what.substr(colon + 2);
        for (std::size_t start = 0; start < extras.size();) {
            const std::size_t end = std::min(extras.find(' ', start), extras.size());
            const std::string arg = extras.substr(start, end - start);
            if (!arg.empty() && arg[0] != '-' && arg.find('=') != std::string::npos && arg.find('=') > 0)
                return fail("'" + arg + "': an override is given as --set " + arg + " (see ffn-lab sweep --help)");
            start = end + 1;
        }
        return fail(what + " (see ffn-lab --help)");
    } catch (const CLI::ParseError& e) {
        // A misspelt subcommand: name the one that was meant.
        if (argc > 1 && argv[1][0] != '-' && app.get_subcommands({}).size() > 0) {
            std::vector<std::string> names;
            for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
            if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
                const auto guess = ffn::did_you_mean(argv[1], names);
                return fail("unknown command '" + std::string(argv[1]) + "'" +
                            (guess ? " (did you mean '" + *guess + "'?)" : std::string()) + "; see ffn-lab --help");
            }
        }
        return fail(std::string(e.what()) + " (see ffn-lab --help)");
    }

    // A misspelt cap would otherwise run on the best kernels without a word.
    if (const char* cap = ffn::unknown_isa_cap()) return fail(std::string("FFNLAB_ISA=") + cap + ": expected ref, avx2 or avx512");

    int code = 0;
    try {
        if (sweep_cmd->parsed()) code = run_sweep(sweep);
        else if (merge_cmd->parsed()) code = run_merge(merge);
        else if (slurm_cmd->parsed()) code = run_slurm(slurm);
        else if (list_cmd->parsed()) code = run_list(list);
        else if (diff_cmd->parsed()) code = run_diff(diff);
        else if (results_cmd->parsed()) code = run_results(results);
        else if (check_cmd->parsed()) code = run_check(check);
        else if (serve_cmd->parsed()) code = run_serve(serve);
        else if (bench_cmd->parsed()) code = run_bench(bench, argv);
    } catch (const ffn::Error& e) {
        std::cout.flush();
        return fail(e.what(), static_cast<int>(e.code()));
    } catch (const std::filesystem::filesystem_error& e) {
        // Every path comes from the user: a name too long, a symlink loop,
        // a folder that cannot be read is bad input, named.
        std::cout.flush();
        return fail(e.path1().string() + ": " + e.code().message());
    } catch (const std::bad_alloc&) {
        std::cout.flush();
        return fail("out of memory: the sweep needs more than this machine (or its limit on memory) gives; "
                    "try fewer runs or smaller sizes");
    } catch (const std::exception& e) {
        std::cout.flush();
        return fail(std::string("internal error: ") + e.what(), 3);
    }
    return finish_stdout(code, stdout_closed);
}
