#include "report/terminal.h"

#include <algorithm>
#include <optional>

namespace ffn::report {

namespace {

// One column of the view: its header and its cells as text.
struct Shown {
    std::string header;
    bool right_aligned = false;
    std::vector<std::string> cells;
    std::size_t width = 0;
};

std::string header_of(const Column& c) { return c.label.empty() ? c.name : c.label; }

std::vector<std::size_t> picked_columns(const Table& t, const TerminalView& view) {
    if (view.columns.empty() && !view.wide && !t.summary().empty()) {
        // A verdict added after the summary was set (an expect block's) is shown too.
        auto picked = t.summary();
        const auto verdict = t.find_column("verdict");
        if (verdict && std::find(picked.begin(), picked.end(), *verdict) == picked.end()) picked.push_back(*verdict);
        return picked;
    }
    std::vector<std::size_t> picked;
    const auto& cols = t.columns();
    for (std::size_t i = 0; i < cols.size(); ++i)
        if (view.columns.empty() || std::find(view.columns.begin(), view.columns.end(), cols[i].name) != view.columns.end())
            picked.push_back(i);
    if (picked.empty() && !cols.empty()) picked.push_back(0);
    return picked;
}

// The picked columns as shown, X_median with X_min and X_max merged (with
// the table's own, whose summary names the median alone).
std::vector<Shown> shown_columns(const Table& t, const std::vector<std::size_t>& picked, bool summary) {
    const auto& cols = t.columns();
    const auto picked_named = [&](const std::string& name) -> std::optional<std::size_t> {
        const auto i = t.find_column(name);
        if (i && (summary || std::find(picked.begin(), picked.end(), *i) != picked.end())) return i;
        return std::nullopt;
    };
    std::vector<std::size_t> merged_away;
    std::vector<Shown> out;
    for (const std::size_t i : picked) {
        if (std::find(merged_away.begin(), merged_away.end(), i) != merged_away.end()) continue;
        const Column& c = cols[i];
        Shown s{header_of(c), is_numeric(c.type), {}, 0};
        const std::string suffix = "_median";
        std::optional<std::size_t> lo, hi;
        if (c.name.size() > suffix.size() && c.name.ends_with(suffix)) {
            const std::string base = c.name.substr(0, c.name.size() - suffix.size());
            lo = picked_named(base + "_min");
            hi = picked_named(base + "_max");
        }
        if (lo && hi) {
            merged_away.insert(merged_away.end(), {*lo, *hi});
            // Three digits tell a spread; the files keep every digit.
            static constexpr int kRangeDigits = 3;
            const auto digits = [](const Column& col) {
                return col.type == ColumnType::real ? std::min(col.precision, kRangeDigits) : col.precision;
            };
            if (c.label.empty()) s.header = c.name.substr(0, c.name.size() - suffix.size()) + " median [min, max]";
            for (const auto& row : t.rows())
                s.cells.push_back(is_null(row[i]) ? std::string()
                                                  : format_cell(row[i], digits(c)) + " [" + format_cell(row[*lo], digits(cols[*lo])) +
                                                        ", " + format_cell(row[*hi], digits(cols[*hi])) + "]");
        } else {
            for (const auto& row : t.rows()) s.cells.push_back(format_cell(row[i], c.precision));
        }
        s.width = display_width(s.header);
        for (const auto& cell : s.cells) s.width = std::max(s.width, display_width(cell));
        out.push_back(std::move(s));
    }
    return out;
}

std::string padded(const std::string& text, std::size_t width, bool right) {
    const std::string pad(width - std::min(width, display_width(text)), ' ');
    return right ? pad + text : text + pad;
}

}  // namespace

std::string to_terminal(const Table& t, const TerminalView& view) {
    constexpr std::size_t kGap = 2;
    const bool summary = view.columns.empty() && !view.wide && !t.summary().empty();
    const std::vector<std::size_t> picked = picked_columns(t, view);
    std::vector<Shown> shown = shown_columns(t, picked, summary);
    // Fitted only when the columns are the table's own choice: what the
    // user names (--columns, --wide) is shown whatever it takes.
    // A verdict is what a reader came for: it keeps its place (the last)
    // when columns before it are left out.
    std::vector<std::string> left_out;
    if (view.columns.empty() && !view.wide) {
        std::optional<Shown> verdict;
        if (shown.size() > 1 && shown.back().header == "verdict") {
            verdict = std::move(shown.back());
            shown.pop_back();
        }
        std::size_t used = verdict ? kGap + verdict->width : 0, kept = 0;
        for (; kept < shown.size(); ++kept) {
            const std::size_t need = used + (kept ? kGap : 0) + shown[kept].width;
            if (kept > 0 && need > view.width) break;
            used = need;
        }
        for (std::size_t i = kept; i < shown.size(); ++i) left_out.push_back(shown[i].header);
        shown.resize(kept);
        if (verdict) shown.push_back(std::move(*verdict));
    }
    if (summary) {
        // The columns a summary leaves out are named too: a reader who
        // needs one more knows it is there (X_min and X_max of a shown
        // X_median are in its range).
        const auto is_picked = [&](const std::string& name) {
            const auto i = t.find_column(name);
            return i && std::find(picked.begin(), picked.end(), *i) != picked.end();
        };
        for (std::size_t i = 0; i < t.columns().size(); ++i) {
            const std::string& name = t.columns()[i].name;
            if (std::find(picked.begin(), picked.end(), i) != picked.end()) continue;
            bool in_range = false;
            for (const char* end : {"_min", "_max"})
                if (name.ends_with(end) && is_picked(name.substr(0, name.size() - 4) + "_median")) in_range = true;
            if (!in_range) left_out.push_back(name);
        }
    }
    std::string out;
    const auto line = [&](const auto& text_of) {
        std::string l;
        for (std::size_t i = 0; i < shown.size(); ++i) {
            if (i) l += std::string(kGap, ' ');
            l += text_of(shown[i]);
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        out += l + "\n";
    };
    line([](const Shown& s) { return padded(s.header, s.width, s.right_aligned); });
    line([](const Shown& s) { return std::string(s.width, '-'); });
    for (std::size_t r = 0; r < t.row_count(); ++r)
        line([r](const Shown& s) { return padded(s.cells[r], s.width, s.right_aligned); });
    if (!left_out.empty()) {
        // Wrapped at the width, as the rows are fitted to it.
        std::vector<std::string> words;
        for (std::size_t i = 0; i < left_out.size(); ++i) words.push_back(left_out[i] + (i + 1 < left_out.size() ? "," : ";"));
        for (const char* w : {"--wide", "shows", "every", "column,", "--columns", "picks)"}) words.emplace_back(w);
        out += wrapped("(" + std::to_string(left_out.size()) + " more:", words, view.width, 0);
    }
    return out;
}

std::string wrapped(const std::string& prefix, const std::vector<std::string>& words, std::size_t width, std::size_t indent) {
    std::string out, line = prefix;
    bool line_has_word = false;
    for (const std::string& word : words) {
        if (line_has_word && display_width(line) + 1 + display_width(word) > width) {
            out += line + "\n";
            line = std::string(indent, ' ');
            line_has_word = false;
        }
        // The prefix's own spacing stays as given; words get one space.
        line += (line_has_word || (!line.empty() && line.back() != ' ') ? " " : "") + word;
        line_has_word = true;
    }
    return out + line + "\n";
}

std::string wrapped(const std::string& prefix, const std::string& text, std::size_t width, std::size_t indent) {
    std::vector<std::string> words;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find(' ', start), text.size());
        if (end > start) words.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return wrapped(prefix, words, width, indent);
}

}  // namespace ffn::report
