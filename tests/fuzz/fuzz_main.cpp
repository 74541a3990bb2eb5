// The libFuzzer binary of one target (make fuzz): HP_FUZZ_ENTRY names its entry function.
#include <cstdlib>
#include <cstring>
#include <string>
#include <new>

#include "fuzz_targets.hpp"

#ifndef HP_FUZZ_ENTRY
#error "HP_FUZZ_ENTRY (the entry function of the target) must be defined"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hp::fuzz::HP_FUZZ_ENTRY(data, size);
    return 0;
}

#ifdef HP_FUZZ_VDB_MUTATOR
// The VDB targets' mutator: libFuzzer's own, and one time in four a mutation of the framing
// (mutate_vdb_framing). Byte-level mutations seldom leave a framing that is consistent but wrong by
// a few bytes, where a reader's off-by-one errors live; the trailer would also refuse most of them.
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned seed) {
    if (seed % 4 == 0) {
        const std::string framed = hp::fuzz::mutate_vdb_framing(std::string(reinterpret_cast<const char*>(data), size), seed / 4);
        if (!framed.empty() && framed.size() <= max_size) {
            std::memcpy(data, framed.data(), framed.size());
            return framed.size();
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
#endif

// Array new as the C++ library provides it: std::bad_alloc when the memory cannot be had.
// AddressSanitizer's own operator new[] aborts the process instead, even with
// allocator_may_return_null=1; OpenVDB allocates a compressed chunk's stored length with new[]
// before it reads the chunk (formats/vdb.md), and the VDB reader turns the bad_alloc of a damaged
// length into exit 3, which the fuzzer must see as the tools do. Above the fuzzer's resident
// memory limit (2 GiB) the allocation fails, as it would on a machine without that memory; below,
// it goes through malloc, which AddressSanitizer still checks. Scalar new (std::vector, ours) is
// left to the sanitizer: an absurd allocation there is a finding.
namespace {
constexpr std::size_t kMaxArrayBytes = std::size_t{2} << 30;
}  // namespace

void* operator new[](std::size_t size) {
    if (size <= kMaxArrayBytes)
        if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
// The nothrow form too (libstdc++'s streams grow their iword/pword arrays with it, which OpenVDB's
// stream metadata uses): its delete[] is the one above, so it must come from malloc as well.
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    return size <= kMaxArrayBytes ? std::malloc(size ? size : 1) : nullptr;
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
