#pragma once
// Atomic output: write to a temporary file in the destination folder, then rename into place,
// so no tool ever leaves a half-written output. A symbolic link is followed: its target is
// replaced, the link stays. An existing path that is not a regular file (a character or block
// device, a FIFO, a socket) is never replaced: the finished file is written into it as a stream
// (from a temporary file in the system's temporary folder), with every write checked.
#include <filesystem>
#include <functional>
#include <string>

namespace hp {

// Calls `write(tmp_path)` to produce the file at a temporary path beside `dest` (beside the link's
// target for a symbolic link), then renames it over that path, or streams it into a device, FIFO
// or socket. On any exception the temporary file is removed and the exception propagates; a
// regular destination is untouched. Throws hp::Error(cannot_write) when the folder is not
// writable, the rename fails or a stream write fails ("no space left" for a full device).
void write_atomically(const std::filesystem::path& dest,
                      const std::function<void(const std::filesystem::path& tmp)>& write);

// Writes `bytes` to `dest` atomically.
void write_file_atomically(const std::filesystem::path& dest, const std::string& bytes);

// `-o -`: write_atomically("-") streams the finished file into this descriptor (default 1, the
// standard output). A program whose summaries also go to stdout moves them first (app::Tool).
void set_standard_output_fd(int fd) noexcept;

// Removes the temporary files of every write in progress (unlink only: async-signal-safe). For
// a program's handler of SIGTERM/SIGINT/SIGHUP, so that an interrupted tool leaves no temporary
// file behind; the destinations stay untouched as always.
void remove_pending_temporaries() noexcept;

// Reads a whole file. Throws hp::Error(bad_input) when it is missing or unreadable.
std::string read_file(const std::filesystem::path& path);

}  // namespace hp
