#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ffn::app {

struct CheckOptions {
    std::vector<std::string> configs;
    std::string root;
    bool update = false, quick = false;
    std::size_t threads = 0;
    std::size_t durations = 0;  // the N slowest configs, summed up at the end
};

CLI::App* setup_check(CLI::App& app, CheckOptions& options);
int run_check(const CheckOptions& options);

}  // namespace ffn::app
