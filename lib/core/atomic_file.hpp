#pragma once
// Atomic output: write to a temporary file in the destination folder, then rename into place,
// so no tool ever leaves a half-written output.
#include <filesystem>
#include <functional>
#include <string>

namespace hp {

// Calls `write(tmp_path)` to produce the file at a temporary path beside `dest`, then renames it
// to `dest`. On any exception the temporary file is removed and the exception propagates; the
// destination is untouched. Throws hp::Error(cannot_write) when the folder is not writable or
// the rename fails.
void write_atomically(const std::filesystem::path& dest,
                      const std::function<void(const std::filesystem::path& tmp)>& write);

// Writes `bytes` to `dest` atomically.
void write_file_atomically(const std::filesystem::path& dest, const std::string& bytes);

// Reads a whole file. Throws hp::Error(bad_input) when it is missing or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace hp
