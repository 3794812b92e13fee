// Every kernel family the machine supports, forced through set_isa, against a
// double-accumulated reference written independently of the library.
#include <doctest/doctest.h>

#include "support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "gemm/gemm.h"

using ffn::gemm::Trans;

namespace {

struct Case {
    int M, N, K;
    bool ta, tb;
    double alpha, beta;
    int pad;  // extra elements per row beyond the minimum leading dimension
};

template <class T>
struct Operands {
    int lda, ldb, ldc;
    std::vector<T> A, B, C;
};

template <class T>
Operands<T> make_operands(const Case& c) {
    ffn::Rng rng(static_cast<std::uint64_t>(c.M * 1000003 + c.N * 1009 + c.K * 7 + c.ta * 2 + c.tb));
    Operands<T> o;
    o.lda = (c.ta ? c.M : c.K) + c.pad;
    o.ldb = (c.tb ? c.K : c.N) + c.pad;
    o.ldc = c.N + c.pad;
    o.A.resize(static_cast<std::size_t>((c.ta ? c.K : c.M) * o.lda));
    o.B.resize(static_cast<std::size_t>((c.tb ? c.N : c.K) * o.ldb));
    o.C.resize(static_cast<std::size_t>(c.M * o.ldc));
    for (auto& v : o.A) v = static_cast<T>(rng.uniform(-1, 1));
    for (auto& v : o.B) v = static_cast<T>(rng.uniform(-1, 1));
    // beta == 0 must not read C: fill it with NaN then.
    for (auto& v : o.C) v = c.beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(rng.uniform(-1, 1));
    return o;
}

template <class T>
std::vector<double> reference(const Case& c, const Operands<T>& o) {
    std::vector<double> out(o.C.size());
    for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < c.N; ++j) {
            double acc = 0;
            for (int k = 0; k < c.K; ++k)
                acc += static_cast<double>(c.ta ? o.A[k * o.lda + i] : o.A[i * o.lda + k]) *
                       static_cast<double>(c.tb ? o.B[j * o.ldb + k] : o.B[k * o.ldb + j]);
            out[i * o.ldc + j] = c.alpha * acc + (c.beta == 0 ? 0.0 : c.beta * static_cast<double>(o.C[i * o.ldc + j]));
        }
    return out;
}

template <class T>
std::vector<T> run(const Case& c, Operands<T> o) {
    ffn::gemm::gemm<T>(c.ta ? Trans::yes : Trans::no, c.tb ? Trans::yes : Trans::no, c.M, c.N, c.K,
                       static_cast<T>(c.alpha), o.A.data(), o.lda, o.B.data(), o.ldb, static_cast<T>(c.beta),
                       o.C.data(), o.ldc);
    return o.C;
}

// gemm's C against the reference: every element within the bound, and the
// padding beyond N in each row of C never touched. One check per case, with
// the first element out of bound named (a check per element made this test
// take minutes under the sanitizers).
template <class T>
void compare(const Case& c, const Operands<T>& o, const std::vector<double>& want) {
    const auto got = run(c, o);
    // Each output sums K products of numbers in [-1, 1], each rounded once,
    // with a running sum rounded K times: |error| <= (K + 3) * eps * K-ish
    // worst case; (K + 4) * eps bounds it for the values here (|sum| <= K,
    // typical error grows like sqrt(K) * eps * |terms|).
    const double bound = (c.K + 4) * std::numeric_limits<T>::epsilon() * (1.0 + std::fabs(c.beta));
    std::size_t outside = 0, padding_touched = 0;
    std::string first;
    for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < o.ldc; ++j) {
            const std::size_t at = static_cast<std::size_t>(i * o.ldc + j);
            if (j >= c.N) {
                padding_touched += std::memcmp(&o.C[at], &got[at], sizeof(T)) != 0;
            } else if (const double error = std::fabs(got[at] - want[at]); !(error <= bound)) {  // NaN is outside
                if (outside++ == 0) {
                    char text[96];
                    std::snprintf(text, sizeof text, "C(%d, %d) off by %.3g, bound %.3g", i, j, error, bound);
                    first = text;
                }
            }
        }
    CAPTURE(first);
    CHECK(outside == 0);
    CHECK(padding_touched == 0);
}

template <class T>
void check_case(const Case& c) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    CAPTURE(c.ta);
    CAPTURE(c.tb);
    CAPTURE(c.alpha);
    CAPTURE(c.beta);
    const auto o = make_operands<T>(c);
    compare(c, o, reference(c, o));
}

void for_every_isa(const std::function<void()>& body) {
    ffn::test::for_each_isa([&](ffn::Isa) { body(); });
}

// Each size in each of M, N, K, the other two drawn from the list too, all
// four transpose pairs, with padded leading dimensions.
std::vector<Case> odd_shapes() {
    const int sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 65, 127, 129, 255, 257};
    std::vector<Case> cases;
    int n = 0;
    for (int s : sizes)
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                const int other = sizes[(n++ * 7) % 15], third = sizes[(n * 11) % 15];
                cases.push_back({s, other, third, ta, tb, 1.0, 0.0, 3});
                cases.push_back({other, s, third, ta, tb, -0.5, 1.0, 1});
                cases.push_back({third, other, s, ta, tb, 1.0, 2.0, 0});
            }
    return cases;
}

// The width sweep's thin products, unpadded so the small path's flat forms
// (rows narrower than a vector, walked as one array) are the ones that run:
// 400 x 1 by 1 x m, 400 x m by m x 1, and their backward products.
std::vector<Case> thin_shapes() {
    std::vector<Case> cases;
    for (int M : {1, 5, 400, 401})
        for (int m : {1, 2, 3, 4, 8, 16, 32})
            for (bool t : {false, true}) {
                cases.push_back({M, m, 1, false, t, 1.0, 0.0, 0});     // x w^T: the first layer
                cases.push_back({M, 1, m, false, t, 1.0, 0.0, 0});     // h v^T: the second layer
                cases.push_back({m, 1, M, true, t, 1.0, 0.0, 0});      // dZ^T x: the first layer's weights
                cases.push_back({1, m, M, true, false, 1.0, 0.0, 0});  // dy^T h: the second layer's
            }
    return cases;
}

// Past the odd shapes' 257: several KC passes, MC blocks (a transposed A is
// packed four blocks at a time, the last group partial), L2 sub-panels of B
// and NC panels, each with a ragged last block. The last two have a C past
// 4 MiB and past the B panel the driver's other order packs (all of K), so
// that order runs (every K block of an MC x NC_L2 stretch of C before the
// next), the first of them over several NC panels.
std::vector<Case> blocking_shapes() {
    std::vector<Case> cases;
    for (bool ta : {false, true}) {
        cases.push_back({1300, 300, 600, ta, false, 1.0, 0.0, 1});
        cases.push_back({1300, 300, 600, ta, true, -0.5, 1.0, 0});
    }
    cases.push_back({40, 4200, 50, true, false, 1.0, 2.0, 0});
    cases.push_back({300, 4200, 260, true, false, 1.0, 0.0, 0});
    cases.push_back({1100, 1000, 300, false, true, -0.5, 1.0, 1});
    return cases;
}

}  // namespace

TEST_CASE_TEMPLATE("gemm matches a double reference on odd shapes for every ISA", T, float, double) {
    for_every_isa([] {
        for (const Case& c : odd_shapes()) check_case<T>(c);
    });
}

TEST_CASE_TEMPLATE("gemm matches a double reference on the width sweep's thin shapes for every ISA", T, float, double) {
    for_every_isa([] {
        for (const Case& c : thin_shapes()) check_case<T>(c);
    });
}

TEST_CASE_TEMPLATE("gemm matches a double reference across every blocking loop for every ISA", T, float, double) {
    for (const Case& c : blocking_shapes()) {
        CAPTURE(c.M);
        CAPTURE(c.N);
        CAPTURE(c.K);
        CAPTURE(c.ta);
        CAPTURE(c.tb);
        const auto o = make_operands<T>(c);
        const auto want = reference(c, o);  // once: 234 million multiply-adds a case
        for_every_isa([&] { compare(c, o, want); });
    }
}

// The promise of gemm.h: every family computes the same bits. Each family the
// machine has against the reference family (the same templates in scalar
// code), on every shape above, in both types; zero tolerance.
TEST_CASE_TEMPLATE("every kernel family computes bitwise the reference family's C", T, float, double) {
    std::vector<Case> cases = odd_shapes();
    for (const auto& list : {thin_shapes(), blocking_shapes()}) cases.insert(cases.end(), list.begin(), list.end());
    for (double alpha : {0.0, 1.0, -0.5})
        for (double beta : {0.0, 1.0, 2.0}) cases.push_back({33, 17, 65, false, true, alpha, beta, 2});
    const ffn::test::IsaGuard guard;
    REQUIRE(ffn::set_isa(ffn::Isa::ref));
    std::vector<std::vector<T>> want;
    for (const Case& c : cases) want.push_back(run(c, make_operands<T>(c)));
    for_every_isa([&] {
        for (std::size_t n = 0; n < cases.size(); ++n) {
            const Case& c = cases[n];
            CAPTURE(c.M);
            CAPTURE(c.N);
            CAPTURE(c.K);
            CAPTURE(c.ta);
            CAPTURE(c.tb);
            const auto got = run(c, make_operands<T>(c));
            REQUIRE(std::memcmp(got.data(), want[n].data(), got.size() * sizeof(T)) == 0);
        }
    });
}

// The packed path's canonical order, restated independently: k in blocks of
// 256, each block one chain of fused multiply-adds from zero, then
// C = alpha * block + beta * C with the products rounded apart (beta = 1
// after the first block). Every family must give exactly these bits.
TEST_CASE_TEMPLATE("the packed path sums each element in the documented canonical order", T, float, double) {
    for_every_isa([] {
        for (const Case c : {Case{70, 90, 600, false, false, 1.0, 0.0, 1}, Case{70, 90, 600, true, true, -0.5, 2.0, 0}}) {
            const auto o = make_operands<T>(c);
            const auto got = run(c, o);
            for (int i = 0; i < c.M; ++i)
                for (int j = 0; j < c.N; ++j) {
                    T out = o.C[i * o.ldc + j];
                    for (int k0 = 0; k0 < c.K; k0 += 256) {
                        T acc = 0;
                        for (int k = k0; k < std::min(c.K, k0 + 256); ++k)
                            acc = std::fma(c.ta ? o.A[k * o.lda + i] : o.A[i * o.lda + k],
                                           c.tb ? o.B[j * o.ldb + k] : o.B[k * o.ldb + j], acc);
                        const T beta = k0 == 0 ? static_cast<T>(c.beta) : T(1);
                        const T scaled = static_cast<T>(c.alpha) * acc;
                        out = beta == T(0) ? scaled : scaled + beta * out;
                    }
                    REQUIRE(std::memcmp(&out, &got[i * o.ldc + j], sizeof(T)) == 0);
                }
        }
    });
}

TEST_CASE_TEMPLATE("gemm alpha and beta follow BLAS: beta 0 never reads C and alpha 0 scales C", T, float, double) {
    for_every_isa([] {
        for (double alpha : {0.0, 1.0, -0.5})
            for (double beta : {0.0, 1.0, 2.0}) check_case<T>({33, 17, 65, false, true, alpha, beta, 2});
        check_case<T>({5, 4, 0, false, false, 1.0, 2.0, 0});  // K = 0: C = beta * C
        check_case<T>({5, 4, 0, false, false, 1.0, 0.0, 0});  // ... = 0, NaNs overwritten
    });
}

TEST_CASE_TEMPLATE("gemm is bitwise identical for 1 and 2 threads across blocks", T, float, double) {
    for_every_isa([] {
        // Large enough to go parallel and to span several MC, KC and NC blocks.
        // The last: C past 4 MiB on one thread (the driver's far-C order),
        // two bands under it on two (Goto's order).
        for (const Case c : {Case{300, 520, 700, false, false, 1.0, 0.0, 0}, Case{257, 4200, 33, true, true, 1.0, 1.0, 0},
                             Case{4, 700, 600, false, true, 1.0, 0.0, 0}, Case{1100, 1000, 300, false, false, 1.0, 0.0, 0}}) {
            const auto o = make_operands<T>(c);
            ffn::gemm::set_max_threads(1);
            const auto one = run(c, o);
            ffn::gemm::set_max_threads(2);
            const auto two = run(c, o);
            ffn::gemm::set_max_threads(0);
            REQUIRE(std::memcmp(one.data(), two.data(), one.size() * sizeof(T)) == 0);
        }
    });
}

TEST_CASE("the epilogue adds the bias and then applies the row function once per element") {
    const int M = 37, N = 45, K = 19;
    std::vector<float> A(M * K, 1.0f), B(K * N, 0.5f), C(M * N), bias(N);
    for (int j = 0; j < N; ++j) bias[j] = static_cast<float>(j);
    std::vector<int> visits(M * N, 0);
    struct Ctx {
        std::vector<int>* visits;
        int N;
    } ctx{&visits, N};
    ffn::gemm::Epilogue<float> ep;
    ep.bias = bias.data();
    ep.context = &ctx;
    ep.rowwise = [](float* row, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
        auto* c = static_cast<Ctx*>(p);
        for (std::int64_t j = 0; j < n; ++j) {
            (*c->visits)[i * c->N + j0 + j]++;
            row[j] = -row[j];
        }
    };
    ffn::gemm::gemm<float>(Trans::no, Trans::no, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N, ep);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            REQUIRE(visits[i * N + j] == 1);
            REQUIRE(C[i * N + j] == -(9.5f + static_cast<float>(j)));  // 19 * 0.5 exactly
        }
}

// The kernels' own bias + relu / relu_grad must equal, bit for bit, the
// plain product followed by the definition in gemm.h: shapes through the small
// path (narrow rows walked flat, n dividing the vector width or not) and the
// packed one, C contiguous or padded, aux holding NaN, -0 and exact zeros.
TEST_CASE_TEMPLATE("built-in pointwise epilogues equal their definition bitwise on every ISA", T, float, double) {
    for_every_isa([] {
        for (const Case c : {Case{400, 2, 1, false, true, 1.0, 0.0, 0}, Case{400, 3, 1, false, true, 1.0, 0.0, 0},
                             Case{400, 16, 1, false, true, 1.0, 0.0, 0}, Case{401, 20, 5, false, false, 1.0, 0.0, 2},
                             Case{130, 1, 7, false, false, 1.0, 0.0, 0}, Case{150, 70, 90, false, true, 1.0, 0.0, 0},
                             Case{150, 70, 90, true, false, -0.5, 1.0, 3}}) {
            CAPTURE(c.M);
            CAPTURE(c.N);
            CAPTURE(c.K);
            auto o = make_operands<T>(c);
            if (c.beta == 0) std::fill(o.C.begin(), o.C.end(), T(0));
            ffn::Rng rng(11);
            std::vector<T> bias(static_cast<std::size_t>(c.N)), aux(o.C.size());
            for (auto& b : bias) b = static_cast<T>(rng.uniform(-1, 1));
            for (std::size_t t = 0; t < aux.size(); ++t)
                aux[t] = t % 7 == 0 ? T(0) : t % 11 == 0 ? -T(0) : t % 13 == 0 ? std::numeric_limits<T>::quiet_NaN()
                                                                              : static_cast<T>(rng.uniform(-1, 1));
            const auto plain = run(c, o);
            for (const auto op : {ffn::gemm::Pointwise::none, ffn::gemm::Pointwise::relu, ffn::gemm::Pointwise::relu_grad}) {
                for (const bool with_bias : {false, true}) {
                    ffn::gemm::Epilogue<T> ep;
                    ep.bias = with_bias ? bias.data() : nullptr;
                    ep.pointwise = op;
                    ep.aux = aux.data();
                    ep.ld_aux = o.ldc;
                    auto C = o.C;
                    ffn::gemm::gemm<T>(c.ta ? Trans::yes : Trans::no, c.tb ? Trans::yes : Trans::no, c.M, c.N, c.K,
                                       static_cast<T>(c.alpha), o.A.data(), o.lda, o.B.data(), o.ldb,
                                       static_cast<T>(c.beta), C.data(), o.ldc, ep);
                    for (int i = 0; i < c.M; ++i)
                        for (int j = 0; j < o.ldc; ++j) {
                            const std::size_t t = static_cast<std::size_t>(i * o.ldc + j);
                            T want = plain[t];
                            if (j < c.N) {
                                if (with_bias) want = want + bias[static_cast<std::size_t>(j)];
                                if (op == ffn::gemm::Pointwise::relu) want = want > T(0) ? want : T(0);
                                if (op == ffn::gemm::Pointwise::relu_grad) want = aux[t] > T(0) ? want : T(0);
                            }
                            REQUIRE(std::memcmp(&want, &C[t], sizeof(T)) == 0);
                        }
                }
            }
        }
    });
}

TEST_CASE("FFNLAB_ISA names and set_isa refuse what the machine lacks") {
    const auto isas = ffn::supported_isas();
    REQUIRE(!isas.empty());
    CHECK(isas.front() == ffn::Isa::ref);  // the reference is always there, first
    CHECK_FALSE(ffn::parse_isa("sse9").has_value());
    for (const auto isa : {ffn::Isa::ref, ffn::Isa::avx2, ffn::Isa::avx512})
        CHECK(ffn::parse_isa(ffn::isa_name(isa)) == isa);
}
