#pragma once
// This process's memory: peak resident set size (VmHWM of /proc/self/status, bytes; 0 where the
// kernel does not say) and a reset of the peak (/proc/self/clear_refs; false where not allowed).
#include <cstddef>

namespace hp {

std::size_t peak_rss_bytes();
bool reset_peak_rss();

}  // namespace hp
