#include "cmd_slurm.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "io/process.h"
#include "runner/config.h"
#include "runner/slurm.h"

namespace ffn::app {

namespace fs = std::filesystem;

namespace {

// sbatch --parsable prints "ID" or "ID;CLUSTER".
std::string submit(const std::vector<std::string>& args) {
    io::ProgramResult run;
    try {
        run = io::run_program(args);
    } catch (const Error& e) {
        throw Error(std::string(e.what()) + "; is Slurm installed here?");
    }
    const auto& [status, out] = run;
    const std::string id = out.substr(0, out.find_first_of(";\n"));
    if (status != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        throw Error(fmt::format("{} failed (exit {}): {}", fmt::join(args, " "), status, out.empty() ? "no output" : out));
    return id;
}

}  // namespace

CLI::App* setup_slurm(CLI::App& app, SlurmOptions& o) {
    auto* cmd = app.add_subcommand("slurm", "Write (and --submit) a Slurm job array of `sweep --shard` tasks and the merge after it");
    cmd->add_option("config,-c,--config", o.config, "JSON config file")->required();
    cmd->add_option("--set", o.overrides, "Override a key, as for sweep (repeatable)");
    cmd->add_option("-o,--out", o.out_dir, "Folder for the scripts and logs (slurm/), the shards (shards/I) and the merged tables (tables/)")
        ->required();
    cmd->add_option("--shards", o.shards, "Array tasks, one part of the grid each")->required()->check(CLI::Range(1, 100000));
    cmd->add_option("--partition", o.partition, "#SBATCH --partition");
    cmd->add_option("--time", o.time, "#SBATCH --time of each task and of the merge (e.g. 1:00:00)");
    cmd->add_option("--mem", o.mem, "#SBATCH --mem of each task (e.g. 4G)");
    cmd->add_option("--cpus-per-task", o.cpus_per_task, "Cores per task (its --threads)")->check(CLI::Range(1, 1024));
    cmd->add_flag("--submit", o.submit, "Submit both jobs with sbatch and print their ids");
    return cmd;
}

int run_slurm(const SlurmOptions& o) {
    // The plan first: a bad config or --set fails here, not in a thousand tasks.
    std::vector<runner::Override> overrides;
    for (const auto& s : o.overrides) overrides.push_back(runner::parse_override(s));
    // A bundled config by name, as sweep takes it; the scripts keep the name
    // as given, for the tasks' ffn-lab to find the same way.
    const std::string config_path = resolve_config(o.config);
    const auto plan = runner::make_plan(runner::load_config(config_path, bundled_configs()), config_path, overrides, experiments::all_kinds());
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find this ffn-lab's own path (/proc/self/exe) for the job scripts");
    const fs::path cwd = fs::current_path(ec);
    const runner::SlurmScripts scripts = runner::write_slurm_scripts({.config = o.config,
                                                                      .overrides = o.overrides,
                                                                      .out = o.out_dir,
                                                                      .shards = o.shards,
                                                                      .cpus_per_task = o.cpus_per_task,
                                                                      .runs = plan.runs.size(),
                                                                      .partition = o.partition,
                                                                      .time = o.time,
                                                                      .mem = o.mem,
                                                                      .program = self.string(),
                                                                      .working_folder = cwd.string()});
    std::cout << fmt::format("{}: {} runs in {} array tasks: {} then {} (sbatch --dependency=afterok:ARRAY_ID)\n", o.config,
                             plan.runs.size(), o.shards, scripts.array, scripts.merge);
    if (!o.submit) return 0;
    const std::string array_id = submit({"sbatch", "--parsable", scripts.array});
    const std::string merge_id = submit({"sbatch", "--parsable", "--dependency=afterok:" + array_id, scripts.merge});
    std::cout << fmt::format("submitted: array job {}, merge job {} (tables in {})\n", array_id, merge_id, scripts.tables);
    return 0;
}

}  // namespace ffn::app
