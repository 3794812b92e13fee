// serve's request heads (app/serve/http.h), the bytes any local client can
// send: each is a request or a refusal with a status, never an exception,
// and a request that passes keeps the limits it was read under.
#include <cstdlib>

#include "serve/http.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const ffn::serve::http::Limits limits;
    const auto head = ffn::serve::http::parse_head(std::string_view(reinterpret_cast<const char*>(data), size), limits);
    if (head.status == 0) {
        if (head.content_length > limits.body_bytes || head.request.path.empty() || head.request.path[0] != '/' ||
            head.request.headers.size() > limits.header_count || size > limits.header_bytes || head.request.header_count("transfer-encoding") > 0)
            std::abort();
    } else if (head.status < 400 || head.status > 505 || head.message.empty()) {
        std::abort();
    }
    return 0;
}
