#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace ffn::app {

struct ListOptions {
    std::string root;
    std::optional<std::string> keys;  // a kind whose keys to print
};

CLI::App* setup_list(CLI::App& app, ListOptions& options);
int run_list(const ListOptions& options);

}  // namespace ffn::app
