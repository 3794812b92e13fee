#pragma once
// OpenBLAS as a yardstick, loaded at run time with dlopen when the machine
// has it (Debian: libopenblas0-pthread). Nothing in ffn-lab links it: the
// benchmark compares against it in the same run, and without it the
// benchmark's OpenBLAS columns are null.
#include <cstdint>
#include <string>

#include "core/isa.h"

namespace ffn::bench {

// The kernel core to ask OpenBLAS for (its OPENBLAS_CORETYPE) when, left
// to itself, it would take this CPU for "Prescott", the SSE3 fallback it
// uses for a CPU it does not recognise (0.3.21 does so on Emerald Rapids),
// though the CPU has AVX2 or AVX-512: a reference run on that fallback
// understates OpenBLAS, and PyTorch on it, several times over. `best_isa`
// is the best gemm family this CPU runs. Empty when OPENBLAS_CORETYPE is
// set already, OpenBLAS is not installed, or it chose a core of its own.
std::string openblas_core_to_force(Isa best_isa);

class OpenBlas {
public:
    OpenBlas();
    ~OpenBlas();
    OpenBlas(const OpenBlas&) = delete;
    OpenBlas& operator=(const OpenBlas&) = delete;

    bool available() const { return sgemm_ != nullptr && dgemm_ != nullptr; }
    const std::string& description() const { return description_; }
    const std::string& core() const { return core_; }
    void set_threads(int threads) const;
    // Row-major C = op(A) op(B), as cblas_?gemm.
    void gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
              std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) const;
    void gemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K, double alpha, const double* A,
              std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc) const;

private:
    using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
    using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                           double*, int);
    void* handle_ = nullptr;
    Sgemm sgemm_ = nullptr;
    Dgemm dgemm_ = nullptr;
    void (*set_threads_)(int) = nullptr;
    std::string description_, core_;
};

}  // namespace ffn::bench
