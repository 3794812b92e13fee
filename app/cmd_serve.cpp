#include "cmd_serve.h"

#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "experiments/registry.h"

extern char** environ;

namespace ffn::app {

namespace {

std::atomic<bool> interrupted{false};
void on_signal(int) { interrupted = true; }

// The URL in the user's browser, by xdg-open as a program of its own (no
// shell); a machine without one gets a line saying so.
void open_in_browser(const std::string& url) {
    pid_t pid = 0;
    const char* argv[] = {"xdg-open", url.c_str(), nullptr};
    if (::posix_spawnp(&pid, "xdg-open", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) {
        std::cout << "ffn-lab serve: --open: no xdg-open here; open the address above yourself\n";
        return;
    }
    std::thread([pid] { ::waitpid(pid, nullptr, 0); }).detach();
}

}  // namespace

CLI::App* setup_serve(CLI::App& app, ServeOptions& o) {
    auto* cmd = app.add_subcommand("serve", "A page where a run trains live (until Ctrl-C); the width sweep's is document 002's \"Try it\"");
    cmd->add_option("--experiment", o.server.experiment, "The kind whose live page to serve (default: the first that has one)");
    cmd->add_option("--port", o.server.port, "Port to listen on (0: any free one)")->check(CLI::Range(0, 65535));
    cmd->add_option("--host", o.server.host,
                    "Address to listen on, an IP address or localhost; one outside 127.0.0.0/8 and ::1 lets other machines in");
    cmd->add_flag("--open", o.open, "Open the page in the browser (xdg-open)");
    return cmd;
}

int run_serve(const ServeOptions& o) {
    serve::Server server(o.server, experiments::all_kinds());
    const std::string host = o.server.host == "0.0.0.0" ? std::string("127.0.0.1")
                             : o.server.host.find(':') != std::string::npos ? "[" + o.server.host + "]"  // IPv6
                                                                             : o.server.host;
    const std::string url = "http://" + host + ":" + std::to_string(server.port()) + "/";
    if (!serve::is_loopback_host(o.server.host))
        std::cout << "ffn-lab serve: --host " << o.server.host
                  << ": any machine that reaches this address can use the page and this machine's cores\n";
    std::cout << "ffn-lab serve: " << url << " (" << server.experiment() << "; Ctrl-C stops it)" << std::endl;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    // The handler only sets a flag; this thread turns it into a clean stop.
    std::thread watcher([&server] {
        while (!interrupted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        server.stop();
    });
    if (o.open) open_in_browser(url);
    server.run();
    interrupted = true;
    watcher.join();
    std::cout << "ffn-lab serve: stopped" << std::endl;
    return 0;
}

}  // namespace ffn::app
