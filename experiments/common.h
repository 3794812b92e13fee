#pragma once
// Small helpers the experiment kinds share: config values to tensors, and
// vectors/matrices as the short text the documents print.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/error.h"
#include <xtensor/xview.hpp>

#include "nn/tensor.h"

namespace ffn::experiments {

// A number as the documents write it: shortest round-trip form, "-0" as "0".
inline std::string number_text(double v) { return v == 0.0 ? "0" : fmt::format("{}", v); }

template <class Container>
std::string vector_text(const Container& v) {
    std::string out = "(";
    bool first = true;
    for (const auto& e : v) {
        if (!first) out += ", ";
        out += number_text(static_cast<double>(e));
        first = false;
    }
    return out + ")";
}

template <class T>
std::string matrix_text(const nn::Matrix<T>& M) {
    std::string out = "[";
    for (std::size_t r = 0; r < M.shape()[0]; ++r) {
        if (r) out += "; ";
        for (std::size_t c = 0; c < M.shape()[1]; ++c) {
            if (c) out += " ";
            out += number_text(static_cast<double>(M(r, c)));
        }
    }
    return out + "]";
}

template <class T>
nn::Matrix<T> to_matrix(const std::vector<std::vector<double>>& rows) {
    nn::Matrix<T> M = nn::Matrix<T>::from_shape({rows.size(), rows.empty() ? 0 : rows[0].size()});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t c = 0; c < rows[r].size(); ++c) M(r, c) = static_cast<T>(rows[r][c]);
    return M;
}

template <class T>
nn::Vector<T> to_vector(const std::vector<double>& values) {
    nn::Vector<T> v = nn::Vector<T>::from_shape({values.size()});
    for (std::size_t i = 0; i < values.size(); ++i) v(i) = static_cast<T>(values[i]);
    return v;
}

// Row r of a batch as a vector.
template <class T>
nn::Vector<T> row_of(const nn::Matrix<T>& M, std::size_t r = 0) {
    return xt::eval(xt::view(M, r, xt::all()));
}

// One input vector as a one-token batch.
template <class T>
nn::Matrix<T> as_row(const nn::Vector<T>& v) {
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({std::size_t{1}, v.size()});
    std::copy(v.begin(), v.end(), X.begin());
    return X;
}

// Throws when a configured tensor's shape is not the one the model needs.
inline void require_shape(const std::string& key, std::size_t rows, std::size_t cols, std::size_t want_rows,
                          std::size_t want_cols, const std::string& why) {
    if (rows != want_rows || cols != want_cols)
        throw Error(fmt::format("key '{}': expected a {}x{} matrix ({}), got {}x{}", key, want_rows, want_cols, why,
                                rows, cols));
}

inline void require_length(const std::string& key, std::size_t length, std::size_t want, const std::string& why) {
    if (length != want)
        throw Error(fmt::format("key '{}': expected {} values ({}), got {}", key, want, why, length));
}

}  // namespace ffn::experiments
