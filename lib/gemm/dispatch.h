#pragma once
// The one dispatch point between the blocked driver and the per-ISA kernels.
#include "gemm/gemm.h"
#include "gemm/kernel.h"

namespace ffn::gemm {

const KernelFamily& active_family();

}  // namespace ffn::gemm
