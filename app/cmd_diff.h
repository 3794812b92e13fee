#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ffn::app {

struct DiffOptions {
    std::string a, b;
    double rtol = 0.0;
    double atol = 0.0;
    std::vector<std::string> tables;   // compare only these (all when empty)
    std::vector<std::string> columns;  // and only these columns' cells
    bool lines = false;                // a line per difference instead of the report
};

CLI::App* setup_diff(CLI::App& app, DiffOptions& options);
int run_diff(const DiffOptions& options);

}  // namespace ffn::app
