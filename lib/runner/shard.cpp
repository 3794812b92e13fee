#include "runner/shard.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>

#include "core/error.h"
#include "core/hash.h"
#include "runner/experiment.h"
#include "runner/run_cache.h"

namespace ffn::runner {

Shard parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    const auto number = [&](std::string_view s, std::size_t& out) {
        const auto* end = s.data() + s.size();
        const auto [p, ec] = std::from_chars(s.data(), end, out);
        return !s.empty() && ec == std::errc() && p == end;
    };
    Shard s;
    if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), s.index) ||
        !number(std::string_view(text).substr(slash + 1), s.count) || s.count == 0 || s.count > 100000 || s.index == 0 ||
        s.index > s.count)
        throw Error("--shard '" + text + "': expected I/N with 1 <= I <= N <= 100000, e.g. 2/8");
    return s;
}

std::vector<std::size_t> shard_runs(const Plan& plan, Shard shard) {
    // Whole work units: a batch split in two would cost two batches.
    const std::vector<std::vector<std::size_t>> items = work_units(plan, std::vector<bool>(plan.runs.size(), true));
    std::vector<double> cost(items.size(), 0.0);
    for (std::size_t k = 0; k < items.size(); ++k)
        for (const std::size_t i : items[k]) cost[k] += plan.kind->cost ? plan.kind->cost(plan.runs[i]) : 1.0;
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
    std::vector<double> load(shard.count, 0.0);
    std::vector<std::size_t> mine;
    for (const std::size_t k : order) {
        const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[least] += cost[k];
        if (least + 1 == shard.index) mine.insert(mine.end(), items[k].begin(), items[k].end());
    }
    std::sort(mine.begin(), mine.end());
    return mine;
}

std::string plan_fingerprint(const Plan& plan) {
    return fmt::format("{:016x}", fnv1a64(fmt::format("{}\n{}\n{}", build_identity(), plan.kind->name, plan.config.dump())));
}

}  // namespace ffn::runner
