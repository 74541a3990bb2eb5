#pragma once
// lib/core/mapped_file — a whole file mapped read-only into memory, for readers that use its
// arrays in place.
//
// The mapping is shared: its pages are the page cache's, shared with every process that maps or
// reads the file, and counted once however many readers map it. It starts at a 2 MiB boundary
// and is advised to use huge pages (MADV_HUGEPAGE): where the page cache holds the file in 2 MiB
// folios (ext4 and XFS on Linux 6.x, for a file written in large writes or read ahead under that
// advice), the kernel maps each with one page table entry, and random reads of a large file miss
// the TLB far less. A file of 0 bytes maps to an empty view.
// Throws hp::Error(bad_input) naming the file when it cannot be opened or mapped.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string_view>

namespace hp {

class MappedFile {
public:
    static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

private:
    MappedFile() = default;
    void* region_ = nullptr;  // the reservation (aligned start and the slack around it)
    std::size_t region_size_ = 0;
    const void* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace hp
