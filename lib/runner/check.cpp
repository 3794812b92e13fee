#include "runner/check.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"
#include "report/diff.h"
#include "report/expected_tables.h"
#include "report/table_io.h"
#include "runner/execute.h"
#include "runner/history.h"
#include "report/table.h"

namespace ffn::runner {

namespace fs = std::filesystem;

std::string configs_folder(const std::string& root) {
    return root.empty() ? "" : (fs::path(root) / "configs").lexically_normal().string();
}

std::optional<std::string> root_above(const std::string& start) {
    std::error_code ec;
    for (fs::path dir = start;; dir = dir.parent_path()) {
        if (fs::is_directory(dir / "configs", ec) && fs::is_directory(dir / "experiments", ec)) return dir.string();
        if (dir.empty() || dir == dir.root_path() || dir.parent_path() == dir) return std::nullopt;
    }
}

std::vector<std::string> bundled_configs(const std::string& root) {
    std::vector<std::string> out;
    const fs::path dir = configs_folder(root);
    if (!fs::is_directory(root)) throw Error(root + ": no such folder (--root names an ffn-lab checkout or a study folder)");
    if (!fs::is_directory(dir))
        throw Error(dir.string() + ": no configs folder (--root names an ffn-lab checkout or a study folder holding configs/)");
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
            out.push_back(entry.path().lexically_normal().string());
    std::sort(out.begin(), out.end());
    return out;
}

void require_in_checkout(const std::string& config_path, const std::string& root) {
    // Expected tables belong to the configs of their own checkout: a config
    // from elsewhere would be mapped, by its file name, onto a bundled
    // config's table and overwrite it under --update.
    std::error_code ec;
    const fs::path configs = fs::weakly_canonical(configs_folder(root), ec);
    const fs::path config = fs::weakly_canonical(config_path, ec);
    // Directly under configs/: expected tables are keyed by file name, so a
    // configs/smoke/params.json would map onto the bundled params.json's.
    if (ec || config.parent_path() != configs)
        throw Error(config_path + ": not one of the configs directly in " +
                    (configs.empty() ? std::string("the bundled configs") : configs_folder(root) + "/") +
                    " (check compares those with their expected tables; --root names another study folder)");
}

std::string expected_path(const std::string& root, const std::string& kind, const std::string& config_path) {
    const fs::path name = fs::path(config_path).filename();
    std::error_code ec;
    if (!fs::is_directory(fs::path(root) / "experiments", ec)) return (fs::path(root) / "expected" / name).lexically_normal().string();
    return (fs::path(root) / "experiments" / kind / "expected" / name).lexically_normal().string();
}

namespace {
// "lr 0.001 -> 0.01, steps 5000 -> 300": each key of the config an
// expected table records that the config now sets otherwise; empty when
// the table records none (written before tables kept their config).
// A run's tables against an expected file's, at the config's tolerance. A
// run id is the hash of the run's settings: when the config changed they
// all differ, which says no more than the config does, so they are counted
// apart, not listed as cells.
struct Comparison {
    std::vector<report::Difference> differences;
    std::size_t tables = 0, run_ids = 0;
    bool same() const { return differences.empty() && run_ids == 0; }
    std::string summary() const { return report::difference_summary(differences, tables); }
};
Comparison compare_with_file(const Plan& plan, const SweepResult& result, const std::string& expected) {
    const auto expected_tables = report::expected_form_of_file(report::read_tables(expected), result.tables);
    Comparison c{report::diff_tables(report::expected_form(result.tables), expected_tables, plan.check_tolerance), expected_tables.size()};
    const auto is_run_id = [](const report::Difference& d) { return d.is_cell() && d.column == "run_id"; };
    c.run_ids = static_cast<std::size_t>(std::count_if(c.differences.begin(), c.differences.end(), is_run_id));
    c.differences.erase(std::remove_if(c.differences.begin(), c.differences.end(), is_run_id), c.differences.end());
    return c;
}

std::string config_changes(const Json& now, const std::string& expected) {
    const Json doc = load_json_file(expected);
    if (!doc.is_object() || !doc.contains("manifest") || !doc["manifest"].is_object() || !doc["manifest"].contains("config")) return "";
    const report::Table changes = manifest_differences(Json{{"config", doc["manifest"]["config"]}}, Json{{"config", now}});
    std::string out;
    for (const auto& row : changes.rows()) {
        const std::string key = std::get<std::string>(row[0]);
        out += (out.empty() ? "" : ", ") + key.substr(key.find('/') + 1) + " " + std::get<std::string>(row[1]) + " -> " +
               std::get<std::string>(row[2]);
    }
    return out;
}
}  // namespace

CheckOutcome check_config(const std::string& config_path, const std::string& root, bool update,
                          const std::vector<ExperimentKind>& kinds, std::size_t threads, const std::string& bundled,
                          bool skip_long) {
    CheckOutcome outcome{config_path, CheckStatus::error, {}};
    std::error_code ec;
    try {
        require_in_checkout(config_path, root);
        const Plan plan = make_plan(load_config(config_path, bundled), config_path, {}, kinds);
        if (skip_long && plan.check_long) {
            outcome.status = CheckStatus::skipped;
            return outcome;
        }
        const SweepResult result = execute(plan, {threads, {}, {}});
        const std::string expected = expected_path(root, plan.kind->name, config_path);
        if (update) {
            // The expected tables are the checkout's own: a symlink planted
            // on the way to them is never written through.
            const fs::path top = fs::path(root).lexically_normal();
            fs::path p = top;
            for (const auto& part : fs::path(expected).parent_path().lexically_relative(top))
                if (fs::is_symlink(fs::symlink_status(p /= part, ec)))
                    throw Error(p.string() + ": a symlink; check --update writes expected tables into the checkout only, never "
                                "through a link (replace it with a folder)");
            fs::create_directories(fs::path(expected).parent_path());
            // No record of the kernel family: every family computes the same
            // bits (gemm.h), so the table is the table of every CPU.
            // The config it was made from (resolved, as a manifest records
            // it), so that a later check can say what changed since.
            const std::string document = report::expected_document(plan.kind->name, result.tables, plan.config);
            // What the update replaced, as check would have said it: a
            // table rewritten should not pass unremarked.
            std::vector<std::string> replaced = {"(new)"};
            if (fs::exists(expected, ec)) {
                try {
                    if (io::read_file(expected) == document) {
                        replaced = {"(unchanged)"};
                    } else {
                        const Comparison c = compare_with_file(plan, result, expected);
                        replaced = {c.same() ? "(the same within the check's tolerance; digits beyond it changed)"
                                             : "replacing: " + c.summary() + " (A = this run, B = the table replaced)"};
                        if (const auto changed = config_changes(plan.config, expected); !changed.empty())
                            replaced.push_back("the config changed since the replaced table was written: " + changed);
                    }
                } catch (const Error&) {
                    replaced = {"(replacing a table that could not be read)"};
                }
            }
            io::write_file_atomically(expected, document);
            outcome.status = CheckStatus::updated;
            outcome.details.push_back("wrote " + expected + " " + replaced.front());
            outcome.details.insert(outcome.details.end(), replaced.begin() + 1, replaced.end());
            return outcome;
        }
        if (!fs::exists(expected))
            throw Error(expected + ": no expected table (run `ffn-lab check " + (root == "." ? "" : "--root " + root + " ") +
                        "--update " + config_path + "` to create it)");
        const Comparison c = compare_with_file(plan, result, expected);
        const auto& differences = c.differences;
        outcome.status = c.same() ? CheckStatus::ok : CheckStatus::differs;
        if (c.same()) return outcome;
        outcome.details.push_back(c.summary() + " (A = this run, B = expected)");
        if (const auto changed = config_changes(plan.config, expected); !changed.empty())
            outcome.details.push_back("the config changed since the expected table was written: " + changed);
        for (const auto& t : result.tables)
            if (t.per_item() && std::any_of(differences.begin(), differences.end(), [&](const report::Difference& d) {
                    return d.table == t.name() + "_summary" || d.where.find("'" + t.name() + "_summary'") != std::string::npos;
                }))
                outcome.details.push_back("table '" + t.name() + "_summary' is table '" + t.name() +
                                          "' summed up per group (an expected table keeps no per-item rows); `ffn-lab sweep " +
                                          config_path + " --out DIR` writes its rows");
        if (c.run_ids) outcome.details.push_back((c.run_ids == 1 ? std::string("1 run id differs") : std::to_string(c.run_ids) + " run ids differ") + " (the runs' settings are not the same)");
        for (const auto& d : differences) outcome.details.push_back(report::describe(d));
    } catch (const Error& e) {
        outcome.status = CheckStatus::error;
        outcome.details.push_back(e.what());
    }
    return outcome;
}

}  // namespace ffn::runner
