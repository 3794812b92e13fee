// The packers each kernel family brings (gemm/kernel.h), tested directly
// against the layouts kernel.h states, on every family the machine runs:
// odd row counts, odd kc and nc, padded leading dimensions, the zero fill,
// and pack_cols' and pack_bt's promise to write nothing past their layout.
#include <doctest/doctest.h>

#include "support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.h"
#include "gemm/dispatch.h"

using namespace ffn::gemm;
using ffn::test::same_bits;

namespace {

constexpr int kSlack = 16;  // kernel.h: pack_rows may write 16 elements past the sliver

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
    ffn::Rng rng(seed);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(rng.uniform(-1, 1));
    return v;
}

// The driver's packing buffers are 64-byte aligned, and the packers store
// with aligned vector stores: so are these.
template <class T>
struct AlignedBuffer {
    explicit AlignedBuffer(std::size_t n)
        : size(n), data(static_cast<T*>(std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64))) {
        std::fill(data, data + n, T(7));
    }
    ~AlignedBuffer() { std::free(data); }
    AlignedBuffer(const AlignedBuffer&) = delete;
    AlignedBuffer& operator=(const AlignedBuffer&) = delete;
    std::size_t size;
    T* data;
};

template <class T>
void check_family(const KernelShape<T>& shape) {
    const std::int64_t MR = shape.MR, NR = shape.NR;
    for (const std::int64_t kc : {1, 7, 64, 255}) {
        const std::int64_t ld = kc + 5;
        const auto a = random_values<T>(static_cast<std::size_t>(ld * (MR + 1) + MR * kc), static_cast<std::uint64_t>(kc));
        for (std::int64_t rows = 1; rows <= MR; ++rows) {
            CAPTURE(kc);
            CAPTURE(rows);
            if (shape.pack_rows) {  // row-major A: row r at a + r * lda
                AlignedBuffer<T> got(static_cast<std::size_t>(kc * MR + kSlack));
                std::vector<T> want(static_cast<std::size_t>(kc * MR));
                shape.pack_rows(a.data(), ld, rows, kc, got.data);
                for (std::int64_t k = 0; k < kc; ++k)
                    for (std::int64_t r = 0; r < MR; ++r) want[k * MR + r] = r < rows ? a[r * ld + k] : T(0);
                CHECK(same_bits(got.data, want.data(), want.size()));
            }
            if (shape.pack_cols) {  // A stored transposed: k's MR values contiguous, lda apart
                AlignedBuffer<T> got(static_cast<std::size_t>(kc * MR + kSlack));
                std::vector<T> want(static_cast<std::size_t>(kc * MR));
                const std::int64_t lda = MR + 3;
                shape.pack_cols(a.data(), lda, rows, kc, got.data);
                for (std::int64_t k = 0; k < kc; ++k)
                    for (std::int64_t r = 0; r < MR; ++r) want[k * MR + r] = r < rows ? a[k * lda + r] : T(0);
                CHECK(same_bits(got.data, want.data(), want.size()));
                for (std::size_t i = want.size(); i < got.size; ++i) CHECK(got.data[i] == T(7));  // nothing past kc * MR
            }
        }
        if (shape.pack_b) {
            for (const std::int64_t nc : {std::int64_t{1}, NR - 1, NR, 3 * NR + 5}) {
                if (nc < 1) continue;
                CAPTURE(nc);
                const std::int64_t ldb = nc + 3;
                const auto b = random_values<T>(static_cast<std::size_t>(kc * ldb), static_cast<std::uint64_t>(nc));
                const std::int64_t slivers = (nc + NR - 1) / NR;
                AlignedBuffer<T> got(static_cast<std::size_t>(slivers * kc * NR));
                std::vector<T> want(got.size);
                shape.pack_b(b.data(), ldb, kc, nc, got.data);
                for (std::int64_t s = 0; s < slivers; ++s)
                    for (std::int64_t k = 0; k < kc; ++k)
                        for (std::int64_t c = 0; c < NR; ++c) {
                            const std::int64_t col = s * NR + c;
                            want[(s * kc + k) * NR + c] = col < nc ? b[k * ldb + col] : T(0);
                        }
                CHECK(same_bits(got.data, want.data(), want.size()));
            }
        }
        if (shape.pack_bt) {  // B stored transposed: column j of op(B) is row j of b, ldb apart
            for (const std::int64_t nc : {std::int64_t{1}, NR / 2 - 1, NR / 2 + 1, NR, 3 * NR + 5}) {
                if (nc < 1) continue;
                CAPTURE(nc);
                const std::int64_t ldb = kc + 3;
                const auto b = random_values<T>(static_cast<std::size_t>(nc * ldb), static_cast<std::uint64_t>(nc + 1));
                const std::int64_t slivers = (nc + NR - 1) / NR;
                AlignedBuffer<T> got(static_cast<std::size_t>(slivers * kc * NR + kSlack));
                std::vector<T> want(static_cast<std::size_t>(slivers * kc * NR));
                shape.pack_bt(b.data(), ldb, kc, nc, got.data);
                for (std::int64_t s = 0; s < slivers; ++s)
                    for (std::int64_t k = 0; k < kc; ++k)
                        for (std::int64_t c = 0; c < NR; ++c) {
                            const std::int64_t col = s * NR + c;
                            want[(s * kc + k) * NR + c] = col < nc ? b[col * ldb + k] : T(0);
                        }
                CHECK(same_bits(got.data, want.data(), want.size()));
                for (std::size_t i = want.size(); i < got.size; ++i) CHECK(got.data[i] == T(7));  // nothing past the slivers
            }
        }
    }
}

}  // namespace

TEST_CASE("every family's packers lay out A and B as kernel.h says") {
    int tested = 0, count = 0;
    ffn::test::for_each_isa([&](ffn::Isa) {
        const KernelFamily& f = active_family();
        check_family(f.f32);
        check_family(f.f64);
        tested += (f.f32.pack_rows || f.f32.pack_cols || f.f32.pack_b || f.f32.pack_bt) ? 1 : 0;
        ++count;
    });
    MESSAGE(tested << " of " << count << " families bring packers of their own");
}
