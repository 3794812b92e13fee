#pragma once
// A small experiment kind for runner tests: its schema has one key of each
// kind of constraint, and its run reports its inputs and a seeded number.
#include "core/rng.h"
#include "runner/experiment.h"

namespace ffn::test {

inline runner::ExperimentKind toy_kind() {
    using runner::KeyType;
    runner::Schema schema{
        {"model.width", KeyType::integer, 4, 1.0, 1024.0, {}, ""},
        {"model.activation", KeyType::string, "relu", {}, {}, {"relu", "gelu"}, ""},
        {"lr", KeyType::number, nullptr, 0.0, {}, {}, "learning rate"},
        {"points", KeyType::number_list, runner::Json::parse("[0, 1]"), {}, {}, {}, ""},
    };
    auto run = [](const runner::Run& r) {
        report::Table t("result");
        t.add_column("width", report::ColumnType::integer).add_column("draw", report::ColumnType::real);
        Rng rng = Rng::stream(r.seed, r.id, "draw");
        t.add_row({r.integer("model.width"), rng.uniform01() * r.number("lr")});
        return std::vector<report::Table>{t};
    };
    return {.name = "toy", .description = "a test kind", .schema = schema, .run = run};
}

}  // namespace ffn::test
