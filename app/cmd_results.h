#pragma once
// `ffn-lab results [DIR...]`: the result folders under DIR (results/ by
// default), one row each, as `dvc exp show` lists experiments
// (runner::result_folders).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "results.h"

namespace ffn::app {

struct ResultsOptions {
    std::vector<std::string> roots;
    DisplayOptions display;
    std::size_t durations = 0;  // the N slowest folders, on stderr
};

CLI::App* setup_results(CLI::App& app, ResultsOptions& options);
int run_results(const ResultsOptions& options);

}  // namespace ffn::app
