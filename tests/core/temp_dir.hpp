#pragma once
// A test's scratch folder in the system's temporary directory, one per process.

#include <filesystem>
#include <string>

#include <unistd.h>

namespace hp::test {

// temp/<prefix><pid>, created if missing.
inline std::filesystem::path temp_dir(const std::string& prefix) {
    const std::filesystem::path d = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace hp::test
