#pragma once
// How much memory this process may still take: checked before a large
// allocation, so that a sweep too big for the machine is one clear line
// and not an abort (an allocation that fails while a big object is being
// freed cannot be reported at all).
#include <cstdint>

namespace ffn {

// The least of the memory the system calls available (MemAvailable in
// /proc/meminfo) and what the address-space limit (ulimit -v) leaves this
// process; UINT64_MAX when neither can be read.
std::uint64_t memory_available();

}  // namespace ffn
