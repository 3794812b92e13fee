// HTTP/1.1 requests read and checked (RFC 9110, 9112), without a socket:
// what the server in http.cpp reads, and what the fuzz harness feeds.
#include "serve/http.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace ffn::serve::http {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), lower);
    return out;
}

// RFC 9110's token characters: a method's and a header name's.
bool is_token(std::string_view s) {
    if (s.empty()) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// %XX decoded (and '+' as a space in a query); nullopt for a bad escape.
std::optional<std::string> decoded(std::string_view s, bool query) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else {
            out += query && s[i] == '+' ? ' ' : s[i];
        }
    }
    return out;
}

// Longer targets are no page or call of ours; refused before routing, they
// never reach a regex (libstdc++'s recurses once a character).
constexpr std::size_t kMaxTarget = 2048;

Head refused(int status, std::string message) {
    Head head;
    head.status = status;
    head.message = std::move(message);
    return head;
}

}  // namespace

std::string Request::header(std::string_view name) const {
    const std::string key = lowered(name);
    for (const auto& [k, v] : headers)
        if (k == key) return v;
    return "";
}

std::size_t Request::header_count(std::string_view name) const {
    const std::string key = lowered(name);
    return static_cast<std::size_t>(std::count_if(headers.begin(), headers.end(), [&](const auto& h) { return h.first == key; }));
}

std::string_view reason(int status) {
    switch (status) {
        case 100: return "Continue";
        case 200: return "OK";
        case 400: return "Bad Request";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 411: return "Length Required";
        case 413: return "Content Too Large";
        case 414: return "URI Too Long";
        case 415: return "Unsupported Media Type";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return "Unknown";
    }
}

Head parse_head(std::string_view text, const Limits& limits) {
    if (text.size() > limits.header_bytes)
        return refused(431, fmt::format("the request's head: more than {} bytes", limits.header_bytes));
    // Lines end in CRLF; a bare LF is taken too (RFC 9112 2.2), a bare CR
    // is not.
    std::vector<std::string_view> lines;
    for (std::size_t at = 0; at <= text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find('\r') != std::string_view::npos) return refused(400, "the request's head: a bare carriage return");
        lines.push_back(line);
        at = end + 1;
    }
    if (lines.size() - 1 > limits.header_count)
        return refused(431, fmt::format("the request's head: more than {} header lines", limits.header_count));

    Head head;
    Request& request = head.request;
    const std::string_view first = lines[0];
    const std::size_t a = first.find(' '), b = a == std::string_view::npos ? a : first.find(' ', a + 1);
    if (b == std::string_view::npos || first.find(' ', b + 1) != std::string_view::npos)
        return refused(400, "the request line: expected METHOD TARGET HTTP/1.1");
    const std::string_view method = first.substr(0, a), version = first.substr(b + 1);
    std::string_view target = first.substr(a + 1, b - a - 1);
    if (!is_token(method)) return refused(400, "the request line: a method that is not a word");
    if (version != "HTTP/1.1" && version != "HTTP/1.0") {
        if (version.starts_with("HTTP/")) return refused(505, "HTTP/1.1 and HTTP/1.0 only");
        return refused(400, "the request line: expected METHOD TARGET HTTP/1.1");
    }
    if (target.size() > kMaxTarget) return refused(414, fmt::format("the request target: more than {} bytes", kMaxTarget));
    for (const char c : target)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return refused(400, "the request target: a control character");
    // The absolute form (RFC 9112 3.2.2, which a server must take): its
    // authority stands for Host, and the rest is the target.
    constexpr std::string_view kScheme = "http://";
    std::string origin_form;
    if (target.size() > kScheme.size() && lowered(target.substr(0, kScheme.size())) == kScheme) {
        const std::string_view rest = target.substr(kScheme.size());
        const std::size_t end = std::min(rest.find('/'), rest.find('?'));
        const std::string_view authority = rest.substr(0, end);
        if (authority.empty() || authority.find('@') != std::string_view::npos)
            return refused(400, "the request target: an absolute form needs a host, and no user");
        request.authority = authority;
        origin_form = end == std::string_view::npos ? "/" : (rest[end] == '?' ? "/" : "") + std::string(rest.substr(end));
        target = origin_form;
    }
    if (target.empty() || target[0] != '/') return refused(400, "the request target: expected a path from /");
    request.method = method;
    const std::size_t q = target.find('?');
    const auto path = decoded(target.substr(0, q), false);
    if (!path) return refused(400, "the request target: a bad %-escape");
    request.path = *path;
    if (q != std::string_view::npos) {
        std::string_view query = target.substr(q + 1);
        while (!query.empty()) {
            const std::size_t amp = query.find('&');
            const std::string_view pair = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
            if (pair.empty()) continue;
            const std::size_t eq = pair.find('=');
            const auto key = decoded(pair.substr(0, eq), true);
            const auto value = decoded(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
            if (!key || !value) return refused(400, "the request target: a bad %-escape");
            request.params.emplace(*key, *value);
        }
    }

    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (!line.empty() && (line[0] == ' ' || line[0] == '\t'))
            return refused(400, "a header line folded onto the next (obsolete, RFC 9112 5.2)");
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
            return refused(400, "a header line: expected Name: value");
        const std::string_view value = trimmed(line.substr(colon + 1));
        for (const char c : value)
            if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7f)
                return refused(400, "a header value: a control character");
        request.headers.emplace_back(lowered(line.substr(0, colon)), std::string(value));
    }

    // A body is framed by Content-Length only: a chunked one could be any
    // size, and the page never sends one.
    if (request.header_count("transfer-encoding") > 0)
        return refused(413, fmt::format("a request body here takes a Content-Length of at most {} KB, not Transfer-Encoding",
                                        limits.body_bytes / 1024));
    if (const std::size_t n = request.header_count("content-length"); n > 0) {
        // Each value a number, and every one the same: a request framed two
        // ways is how requests are smuggled past a proxy.
        std::string length;
        for (const auto& [k, v] : request.headers) {
            if (k != "content-length") continue;
            if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return refused(400, "Content-Length: expected a number of bytes");
            if (!length.empty() && v != length) return refused(400, "two Content-Length headers that differ");
            length = v;
        }
        head.content_length = std::stoull(length);
        if (head.content_length > limits.body_bytes)
            return refused(413, fmt::format("the request body: more than {} KB", limits.body_bytes / 1024));
    }
    const std::string connection = lowered(request.header("connection"));
    head.keep_alive = version == "HTTP/1.1" ? connection.find("close") == std::string::npos : connection.find("keep-alive") != std::string::npos;
    // An HTTP/1.0 client is sent no 100 Continue (RFC 9110 15.2).
    head.expects_continue = version == "HTTP/1.1" && lowered(request.header("expect")) == "100-continue";
    return head;
}

}  // namespace ffn::serve::http
