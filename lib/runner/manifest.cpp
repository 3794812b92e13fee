#include "runner/manifest.h"

#include <ctime>

#include "core/isa.h"
#include "ffnlab/build_info.h"
#include "report/expect.h"
#include "runner/experiment.h"

namespace ffn::runner {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

namespace {
// run_record's keys up to the counts; the times follow, after what a sweep
// adds (the order manifest.json has always had).
Json record_without_times(const Plan& plan, const RunCounts& counts) {
    Json m;
    m["experiment"] = plan.kind->name;
    m["config_file"] = plan.source;
    m["config"] = plan.config;
    m["overrides"] = plan.overrides;
    m["ffn_lab_version"] = build::version;
    m["git_commit"] = std::string(build::git_commit).empty() ? Json(nullptr) : Json(build::git_commit);
    m["build_type"] = build::build_type;
    m["gemm_isa"] = isa_name(active_isa());
    m["threads"] = counts.threads;
    m["seeds"] = plan.seeds;
    m["runs"] = counts.runs;
    m["runs_computed"] = counts.runs - counts.reused;
    m["runs_reused"] = counts.reused;
    m["runs_rejected"] = counts.rejected;
    m["runs_not_cached"] = counts.not_cached;
    return m;
}

void add_times(Json& m, const RunCounts& counts) {
    m["started_utc"] = counts.started_utc;
    m["wall_seconds"] = counts.wall_seconds;
}
}  // namespace

Json run_record(const Plan& plan, const RunCounts& counts) {
    Json m = record_without_times(plan, counts);
    add_times(m, counts);
    return m;
}

Json sweep_manifest(const Plan& plan, const RunCounts& counts, const std::vector<report::Table>& tables) {
    Json m = record_without_times(plan, counts);
    Json points = Json::array();
    for (const auto& p : plan.points) points.push_back(p->values);
    m["resolved_points"] = points;
    add_times(m, counts);
    const auto verdicts = report::count_verdicts(tables);
    m["verdicts"] = {{"pass", verdicts.pass}, {"miss", verdicts.miss}, {"n/a", verdicts.not_applicable}};
    return m;
}

}  // namespace ffn::runner
