#pragma once
// One writer per manifest: a batch, a plan or a merge holds an exclusive lock (fcntl) on an empty
// hidden file beside the manifest it writes (".manifest.json.lock", one per shard manifest) for as
// long as it runs. A second writer of the same manifest fails at once with
// hp::Error(cannot_write) naming the folder and the holder's pid; shards (--shard) write
// manifests of their own and so run side by side. The lock ends with the process, however it
// ends; the lock file stays (removing it would race with the next writer).
#include <filesystem>

namespace hp::pipeline {

class OutdirLock {
public:
    // `manifest`: the manifest file the caller will write; its folder must exist.
    explicit OutdirLock(const std::filesystem::path& manifest);
    ~OutdirLock();
    OutdirLock(const OutdirLock&) = delete;
    OutdirLock& operator=(const OutdirLock&) = delete;

private:
    int fd_ = -1;
};

}  // namespace hp::pipeline
