#include "common.h"

#include <atomic>
#include <cstring>

#include <csignal>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "io/bundle.h"
#include "runner/check.h"
#include "runner/config.h"
#include "runner/schema.h"

namespace ffn::app {

namespace fs = std::filesystem;


std::string find_root(const std::string& given) {
    if (!given.empty()) return given;
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (ec) return "";
    const auto dir = runner::root_above(cwd.string());
    if (!dir) return "";
    return fs::path(*dir) == cwd ? "." : fs::relative(*dir, cwd, ec).string();
}

std::string bundled_configs() {
    return runner::configs_folder(find_root(""));
}

std::string resolve_config(const std::string& given) {
    std::error_code ec;
    // A file (or a link, a FIFO: anything but a folder) is the user's; a
    // folder of that name (results/width_quick/) does not hide a bundled
    // config.
    const auto status = fs::symlink_status(given, ec);
    if (given.empty() || (fs::exists(status) && !fs::is_directory(status))) return given;
    const std::string bundled = bundled_configs();
    std::vector<std::string> tried = {given};
    if (const auto found = runner::find_bundled_config(bundled, given, tried)) return *found;
    // configs/NAME, as the README and ffn-lab's own messages name a bundled
    // config, means the same one outside a checkout.
    if (const fs::path path(given); !path.is_absolute() && path.begin() != path.end() && *path.begin() == "configs") {
        const fs::path rest = path.lexically_relative("configs");
        if (!rest.empty() && rest != ".")
            if (const auto found = runner::find_bundled_config(bundled, rest.generic_string(), tried)) return *found;
    }
    if (fs::is_directory(status)) throw Error(given + ": a folder, not a config file (give the .json file inside it)");
    // A path the user wrote out, absolute or into a folder that is there,
    // is theirs: the loader says why it cannot be opened.
    const fs::path parent = fs::path(given).parent_path();
    if (fs::path(given).is_absolute() || (!parent.empty() && fs::is_directory(parent, ec))) return given;
    const std::string name = fs::path(given).replace_extension().generic_string();
    const auto guess = runner::did_you_mean(name, runner::bundled_config_names(bundled));
    throw Error(fmt::format("{}: no such config (tried {}{}; `ffn-lab list` shows the bundled ones)", given, fmt::join(tried, ", "),
                            guess ? "; did you mean '" + *guess + "'?" : ""));
}

std::size_t terminal_width() {
    if (const char* columns = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(columns, &end, 10);
        if (end != columns && *end == '\0' && n > 0 && n < 100000) return static_cast<std::size_t>(n);
    }
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return 80;
}

namespace {
// The interrupt's line, made before the signal can come: a handler may only
// call what is async-signal-safe (write, unlink, rmdir, signal, raise).
// The carried files' folder goes too (exit's destructors do not run); then
// the signal ends the process as it would have, for the shell to see.
char interrupt_line[4096];
std::atomic<std::size_t> interrupt_length{0};  // stored after the line, so a signal never reads half of one
void on_interrupt(int signal) {
    (void)!::write(STDERR_FILENO, interrupt_line, interrupt_length.load());
    io::bundle::remove_folder_in_signal();
    std::signal(signal, SIG_DFL);
    ::raise(signal);
}
}  // namespace

void end_on_signals() {
    // A signal ignored when ffn-lab starts stays ignored: a shell script
    // starts its background jobs so, for Ctrl-C to leave them running.
    for (const int signal : {SIGINT, SIGTERM}) {
        struct sigaction now {};
        if (::sigaction(signal, nullptr, &now) == 0 && now.sa_handler == SIG_IGN) continue;
        std::signal(signal, on_interrupt);
    }
}

void say_on_interrupt(const std::string& message) {
    const std::string line = "\n" + message.substr(0, sizeof interrupt_line - 2) + "\n";
    interrupt_length = 0;
    std::memcpy(interrupt_line, line.data(), line.size());
    interrupt_length = line.size();
}

Progress::Progress(bool enabled)
    : enabled_(enabled), terminal_(::isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
    if (drawn_ && terminal_ && !ended_) std::fputs("\n", stderr);
}

void Progress::update(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0) return;  // short sweeps stay silent
    // Into a log, a line every kLogSeconds and the last one, as tqdm does
    // there: a log sees progress without a flood.
    if (!terminal_ && elapsed - last_line_ < kLogSeconds && done < total) return;
    const double eta = done ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
    const std::string line = fmt::format("runs {}/{}, {:.1f} s elapsed, ETA {:.1f} s", done, total, elapsed, eta);
    std::fputs((terminal_ ? "\r" + line + "   " : line + "\n").c_str(), stderr);
    last_line_ = elapsed;
    drawn_ = true;
    // The last run done: the line ends now, before the tables start on
    // the same terminal.
    if (terminal_ && done == total && !ended_) {
        std::fputs("\n", stderr);
        ended_ = true;
    }
}

}  // namespace ffn::app
