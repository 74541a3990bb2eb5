// The libFuzzer binary of one target (make fuzz): HP_FUZZ_ENTRY names its entry function.
#include "fuzz_targets.hpp"

#ifndef HP_FUZZ_ENTRY
#error "HP_FUZZ_ENTRY (the entry function of the target) must be defined"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hp::fuzz::HP_FUZZ_ENTRY(data, size);
    return 0;
}
