#pragma once
// Tables as a terminal shows them: columns aligned and fitted to the
// terminal's width. Files and pipes get markdown, CSV or JSON
// (report/table_io.h); this view is for a person reading at a prompt, and
// nothing reads it back.
#include <cstddef>
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::report {

struct TerminalView {
    std::size_t width = 80;            // characters a line may take
    bool wide = false;                 // every column, lines as long as they need
    std::vector<std::string> columns;  // these columns (the ones this table has), in the table's order, unfitted
};

// The table's default columns are its summary (Table::summary), or all
// when it has none; they are kept from the left while they fit in `width`,
// and a last line names the ones left out. A column X_median shown with
// X_min and X_max becomes one, "X median [min, max]" (or the median
// column's label), at three significant digits. Headers are the columns'
// labels. Numbers are right-aligned, text left-aligned. A choice of
// columns none of which the table has shows its first column alone.
std::string to_terminal(const Table& t, const TerminalView& view);

// `words` as lines of at most `width` characters, a space between words (a
// word longer than a line keeps its own): the first line starts with
// `prefix`, the others with `indent` spaces. Each line ends in a newline.
std::string wrapped(const std::string& prefix, const std::vector<std::string>& words, std::size_t width, std::size_t indent);
// The same for the words of `text` (split at spaces).
std::string wrapped(const std::string& prefix, const std::string& text, std::size_t width, std::size_t indent);

}  // namespace ffn::report
