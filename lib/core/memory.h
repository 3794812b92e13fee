#pragma once
// How much memory this process may still take: checked before a large
// allocation, so that a sweep too big for the machine is one clear line
// and not an abort (an allocation that fails while a big object is being
// freed cannot be reported at all).
#include <cstddef>
#include <cstdint>

namespace ffn {

// The least of the memory the system calls available (MemAvailable in
// /proc/meminfo) and what the address-space limit (ulimit -v) leaves this
// process; UINT64_MAX when neither can be read.
std::uint64_t memory_available();

// Asks the kernel to back [data, data + bytes) with huge pages where it
// can (Linux's madvise MADV_HUGEPAGE, for memory not yet touched): a
// buffer of hundreds of megabytes then costs a few hundred page faults,
// not a hundred thousand. A hint: nothing changes where it is refused.
void prefer_huge_pages(void* data, std::size_t bytes);

// Has the allocator keep freed memory for reuse (glibc: blocks up to 32 MB
// from the heap, up to 256 MB of free heap kept) instead of handing it
// back to the kernel at once: a training step frees and takes back the
// same buffers, and each fresh mapping's first touch is a page fault per
// 4 KB again (9% of glu_variants' samples on a paravirtualised kernel, and
// more of its wall time). Call once, before threads start. Freed memory up
// to the threshold stays with the process (with each thread's arena),
// counted in its resident size until used again.
void keep_freed_memory();

}  // namespace ffn
