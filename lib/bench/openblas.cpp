#include "bench/openblas.h"

#include <dlfcn.h>

#include <cstdlib>

namespace ffn::bench {

namespace {
// CBLAS enum values (cblas.h): row-major layout, no transpose, transpose.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
}  // namespace

OpenBlas::OpenBlas() {
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
        handle_ = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (handle_) break;
    }
    if (!handle_) return;
    sgemm_ = reinterpret_cast<Sgemm>(::dlsym(handle_, "cblas_sgemm"));
    dgemm_ = reinterpret_cast<Dgemm>(::dlsym(handle_, "cblas_dgemm"));
    set_threads_ = reinterpret_cast<void (*)(int)>(::dlsym(handle_, "openblas_set_num_threads"));
    auto config = reinterpret_cast<char* (*)()>(::dlsym(handle_, "openblas_get_config"));
    auto core = reinterpret_cast<char* (*)()>(::dlsym(handle_, "openblas_get_corename"));
    core_ = core ? core() : "";
    description_ = std::string(config ? config() : "OpenBLAS") + (core_.empty() ? "" : " core " + core_);
    if (const char* forced = std::getenv("OPENBLAS_CORETYPE")) description_ += std::string(" (OPENBLAS_CORETYPE=") + forced + ")";
}

std::string openblas_core_to_force(Isa best_isa) {
    if (std::getenv("OPENBLAS_CORETYPE")) return "";
    const OpenBlas ob;
    if (!ob.available() || ob.core() != "Prescott") return "";
    switch (best_isa) {
        case Isa::avx512: return "SkylakeX";
        case Isa::avx2: return "Haswell";
        case Isa::ref: return "";
    }
    return "";
}

OpenBlas::~OpenBlas() {
    if (handle_) ::dlclose(handle_);
}

void OpenBlas::set_threads(int threads) const {
    if (set_threads_) set_threads_(threads);
}

void OpenBlas::gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
                    std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) const {
    sgemm_(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<int>(M), static_cast<int>(N),
           static_cast<int>(K), alpha, A, static_cast<int>(lda), B, static_cast<int>(ldb), beta, C, static_cast<int>(ldc));
}

void OpenBlas::gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, double alpha, const double* A,
                    std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C,
                    std::int64_t ldc) const {
    dgemm_(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, static_cast<int>(M), static_cast<int>(N),
           static_cast<int>(K), alpha, A, static_cast<int>(lda), B, static_cast<int>(ldb), beta, C, static_cast<int>(ldc));
}

}  // namespace ffn::bench
