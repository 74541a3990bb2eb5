#pragma once
// --log FILE: a batch task's progress as lines appended to a file: one when it starts (tool,
// pipeline, shard and where it came from, host, pid), one per mesh started and finished, one at
// the end (the summary, or the error that stopped it). Each line is written and flushed at once,
// so a task its scheduler kills still leaves a log up to its last mesh, and a task submitted again
// appends to the same file. "%I" and "%N" in the file name are the shard's index and count, "%%"
// is "%": one pattern serves every task of an array (out/logs/shard-%I-of-%N.log).
#include <cstdio>
#include <filesystem>
#include <string>

#include "pipeline/batch.hpp"

namespace hp::pipeline {

// The file name for a shard. Throws hp::Error(usage) for "%I"/"%N" without a shard or another "%".
std::filesystem::path log_path(const std::string& pattern, const Shard& shard);

class TaskLog {
public:
    // Creates the file's folder and opens the file to append. Throws hp::Error(cannot_write).
    TaskLog(const std::string& pattern, const Shard& shard);
    ~TaskLog();
    TaskLog(const TaskLog&) = delete;
    TaskLog& operator=(const TaskLog&) = delete;

    const std::filesystem::path& file() const { return file_; }
    // "<UTC time> <text>\n", flushed. A failed write is remembered: end() reports it.
    void line(const std::string& text);

    void start(const Pipeline& pipeline, const BatchOptions& options, std::size_t meshes, const std::string& shard_source);
    void mesh_started(const MeshJob& job);
    void mesh_finished(const MeshEntry& entry);
    // The summary line; throws hp::Error(cannot_write) when a line could not be written.
    void end(const Manifest& manifest);
    void stopped(const std::string& error, int exit_code);

private:
    std::filesystem::path file_;
    std::FILE* out_ = nullptr;
    bool write_failed_ = false;
};

}  // namespace hp::pipeline
