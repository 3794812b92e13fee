#include "cmd_slurm.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "io/atomic_file.h"
#include "io/process.h"
#include "runner/config.h"

namespace ffn::app {

namespace fs = std::filesystem;

namespace {

// A word for the job scripts' shell, whatever it holds: single quotes, and
// a quote inside as '\''. Paths and --set values reach sbatch only so.
std::string shell_word(const std::string& s) {
    std::string out = "'";
    for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// An #SBATCH value is read by sbatch, not a shell: refuse what it could
// misread (spaces, quotes, control characters) rather than quote it.
std::string sbatch_value(const std::string& option, const std::string& value) {
    for (const char c : value)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-:.,=+/").find(c) != std::string_view::npos))
            throw Error(fmt::format("--{} '{}': letters, digits and _-:.,=+/ only (it goes into an #SBATCH line)", option, value));
    return value;
}

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
    const auto plan = runner::make_plan(runner::load_config(o.config, bundled_configs()), o.config, overrides, experiments::all_kinds());
    std::error_code ec;
    const fs::path out = fs::absolute(o.out_dir, ec), cwd = fs::current_path(ec);
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find this ffn-lab's own path (/proc/self/exe) for the job scripts");
    const fs::path scripts = out / "slurm";
    // Every #SBATCH value before anything is written.
    sbatch_value("out", out.string());  // the logs' path goes into #SBATCH --output
    if (!o.partition.empty()) sbatch_value("partition", o.partition);
    if (!o.time.empty()) sbatch_value("time", o.time);
    if (!o.mem.empty()) sbatch_value("mem", o.mem);
    // The merge job takes every folder in OUT/shards: one that this array's
    // tasks will not rewrite (an earlier, longer array's) would spoil it.
    if (fs::is_directory(out / "shards", ec))
        for (const auto& entry : fs::directory_iterator(out / "shards", ec)) {
            const std::string name = entry.path().filename().string();
            if (name.starts_with(".")) continue;  // a killed task's staging folder
            const bool part = !name.empty() && name.size() < 7 && name.find_first_not_of("0123456789") == std::string::npos &&
                              name[0] != '0' && std::stoul(name) <= o.shards;
            if (!part)
                throw Error(fmt::format("{}: not a part of this {}-part array (an earlier array's?); remove it or choose "
                                        "another --out",
                                        entry.path().string(), o.shards));
        }
    fs::create_directories(scripts / "logs", ec);
    if (ec) throw Error(o.out_dir + ": cannot create " + (scripts / "logs").string() + " (" + ec.message() + ")");

    std::string sets;
    for (const auto& s : o.overrides) sets += " --set " + shell_word(s);
    std::string header = "#!/bin/sh\n";
    if (!o.partition.empty()) header += "#SBATCH --partition=" + sbatch_value("partition", o.partition) + "\n";
    if (!o.time.empty()) header += "#SBATCH --time=" + sbatch_value("time", o.time) + "\n";
    const std::string body_start = "set -eu\ncd " + shell_word(cwd.string()) + "\n";
    const std::string array =
        header + fmt::format("#SBATCH --job-name=ffnlab-shards\n#SBATCH --array=1-{}\n#SBATCH --cpus-per-task={}\n", o.shards, o.cpus_per_task) +
        (o.mem.empty() ? "" : "#SBATCH --mem=" + sbatch_value("mem", o.mem) + "\n") +
        "#SBATCH --output=" + (scripts / "logs" / "shard-%a.log").string() + "\n" + body_start +
        fmt::format("# {} runs in {} parts; merge.sbatch joins them.\n", plan.runs.size(), o.shards) +
        shell_word(self.string()) + " sweep -c " + shell_word(o.config) + sets + " -q --threads " + std::to_string(o.cpus_per_task) +
        " --shard \"$SLURM_ARRAY_TASK_ID/" + std::to_string(o.shards) + "\" --out " + shell_word((out / "shards").string()) +
        "/\"$SLURM_ARRAY_TASK_ID\"\n";
    std::string merge = header + "#SBATCH --job-name=ffnlab-merge\n#SBATCH --output=" + (scripts / "logs" / "merge.log").string() +
                        "\n" + body_start + shell_word(self.string()) + " merge --shards-in " +
                        shell_word((out / "shards").string());  // one argument however many parts (no ARG_MAX)
    merge += " -q --out " + shell_word((out / "tables").string()) + " > /dev/null\n";
    io::write_file_atomically((scripts / "shards.sbatch").string(), array);
    io::write_file_atomically((scripts / "merge.sbatch").string(), merge);
    std::cout << fmt::format("{}: {} runs in {} array tasks: {} then {} (sbatch --dependency=afterok:ARRAY_ID)\n", o.config,
                             plan.runs.size(), o.shards, (scripts / "shards.sbatch").string(), (scripts / "merge.sbatch").string());
    if (!o.submit) return 0;
    const std::string array_id = submit({"sbatch", "--parsable", (scripts / "shards.sbatch").string()});
    const std::string merge_id =
        submit({"sbatch", "--parsable", "--dependency=afterok:" + array_id, (scripts / "merge.sbatch").string()});
    std::cout << fmt::format("submitted: array job {}, merge job {} (tables in {})\n", array_id, merge_id, (out / "tables").string());
    return 0;
}

}  // namespace ffn::app
