// A result table file read as `ffn-lab diff` and `check` read them: as
// JSON when it starts with '{' (so the expected tables of experiments/ seed
// it as they are), else as CSV. What reads is written back in every format
// and compared with itself.
#include "report/diff.h"
#include "report/table_io.h"
#include "report/terminal.h"
#include "tests/fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string name = size > 0 && data[0] == '{' ? "tables.json" : "table.csv";
    const std::string path = ffn::fuzz::scratch_file(name, std::string_view(reinterpret_cast<const char*>(data), size));
    return ffn::fuzz::accept_or_refuse([&] {
        const auto tables = ffn::report::read_tables(path);
        for (const auto& t : tables) {
            ffn::report::to_markdown(t);
            ffn::report::to_csv(t);
            ffn::report::to_json(t);
            ffn::report::to_terminal(t, {40, false, {}});
        }
        ffn::report::diff_tables(tables, tables, {});
    });
}
