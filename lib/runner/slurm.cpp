#include "runner/slurm.h"

#include <fmt/format.h>
#include <regex>

#include <cctype>
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "io/atomic_file.h"
#include "report/text.h"

namespace ffn::runner {

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

}  // namespace

SlurmScripts write_slurm_scripts(const SlurmArray& a) {
    std::error_code ec;
    const fs::path out = fs::absolute(a.out, ec), scripts = out / "slurm";
    if (a.shards > a.runs)
        throw Error(fmt::format("--shards {}: the sweep has {}, so {} tasks would have nothing to do", a.shards,
                                report::counted(a.runs, "run"), a.shards - a.runs));
    // Every #SBATCH value before anything is written.
    sbatch_value("out", out.string());  // the logs' path goes into #SBATCH --output
    if (!a.partition.empty()) sbatch_value("partition", a.partition);
    // Slurm's forms: minutes, m:s, h:m:s, d-h, d-h:m, d-h:m:s, or no limit;
    // another would fail each task at sbatch, after the scripts are out.
    static const std::regex kTime(R"((\d+(:\d+){0,2}|\d+-\d+(:\d+){0,2}|UNLIMITED|INFINITE|unlimited|infinite))");
    if (!a.time.empty() && !std::regex_match(sbatch_value("time", a.time), kTime))
        throw Error(fmt::format("--time '{}': expected minutes, H:MM:SS or D-HH:MM:SS (Slurm's forms)", a.time));
    if (!a.mem.empty()) sbatch_value("mem", a.mem);
    // The merge job takes every folder in OUT/shards.
    if (fs::is_directory(out / "shards", ec))
        for (const auto& entry : fs::directory_iterator(out / "shards", ec)) {
            const std::string name = entry.path().filename().string();
            if (name.starts_with(".")) continue;  // a killed task's staging folder
            const bool part = !name.empty() && name.size() < 7 && name.find_first_not_of("0123456789") == std::string::npos &&
                              name[0] != '0' && std::stoul(name) <= a.shards;
            if (!part)
                throw Error(fmt::format("{}: not a part of this {}-part array (an earlier array's?); remove it or choose "
                                        "another --out",
                                        entry.path().string(), a.shards));
        }
    fs::create_directories(scripts / "logs", ec);
    if (ec) throw Error(a.out + ": cannot create " + (scripts / "logs").string() + " (" + ec.message() + ")");

    std::string sets;
    for (const auto& s : a.overrides) sets += " --set " + shell_word(s);
    std::string header = "#!/bin/sh\n";
    if (!a.partition.empty()) header += "#SBATCH --partition=" + a.partition + "\n";
    if (!a.time.empty()) header += "#SBATCH --time=" + a.time + "\n";
    const std::string body_start = "set -eu\ncd " + shell_word(a.working_folder) + "\n";
    const std::string array =
        header + fmt::format("#SBATCH --job-name=ffnlab-shards\n#SBATCH --array=1-{}\n#SBATCH --cpus-per-task={}\n", a.shards, a.cpus_per_task) +
        (a.mem.empty() ? "" : "#SBATCH --mem=" + a.mem + "\n") + "#SBATCH --output=" + (scripts / "logs" / "shard-%a.log").string() + "\n" +
        body_start + fmt::format("# {} runs in {} parts; merge.sbatch joins them.\n", a.runs, a.shards) + shell_word(a.program) +
        " sweep -c " + shell_word(a.config) + sets + " -q --threads " + std::to_string(a.cpus_per_task) + " --shard \"$SLURM_ARRAY_TASK_ID/" +
        std::to_string(a.shards) + "\" --out " + shell_word((out / "shards").string()) + "/\"$SLURM_ARRAY_TASK_ID\"\n";
    const std::string merge = header + "#SBATCH --job-name=ffnlab-merge\n#SBATCH --output=" + (scripts / "logs" / "merge.log").string() +
                              "\n" + body_start + shell_word(a.program) + " merge --shards-in " +
                              shell_word((out / "shards").string()) +  // one argument however many parts (no ARG_MAX)
                              " -q --out " + shell_word((out / "tables").string()) + " > /dev/null\n";
    const SlurmScripts written{(scripts / "shards.sbatch").string(), (scripts / "merge.sbatch").string(), (out / "tables").string()};
    io::write_file_atomically(written.array, array);
    io::write_file_atomically(written.merge, merge);
    return written;
}

}  // namespace ffn::runner
