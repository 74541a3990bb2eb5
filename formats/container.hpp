#pragma once
// formats/container — the project's binary container for pointshells, point-sphere trees and
// CFMs. Byte layout, versioning and damage detection: formats/container.md.
//
// A file is: a 40-byte header (magic "HAPTICPF", format version, a 4-byte kind tag, the total
// file size, the section count, CRC-32 of the header), then sections, each a 32-byte section
// header (name, payload length, CRC-32 of the payload, CRC-32 of the section header) and its
// payload. The first section is always "meta": the JSON provenance block. Every byte is covered by
// a CRC-32, so truncation and bit flips are detected before any payload is interpreted.
// Little-endian throughout.
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace hp::container {

static_assert(std::endian::native == std::endian::little, "the container code assumes a little-endian host");

inline constexpr std::uint32_t kFormatVersion = 1;

enum class Kind { pointshell, tree, cfm, octree, sampler };
// "pointshell", "point-sphere tree", "closest feature map", "octree", "prepared sampler"
const char* kind_name(Kind k);

// True when the file starts with the container's magic bytes.
bool looks_like_container(const std::filesystem::path& path);

class Writer {
public:
    // `metadata` (a JSON object) becomes the "meta" section; tool_version (this build) and
    // sign_convention ("inside_positive") are added when absent. No timestamp is added, so the
    // same input gives byte-identical files.
    Writer(Kind kind, nlohmann::json metadata);

    // Sections are written in the order added. Names: 1-16 bytes, unique, not "meta"
    // (std::invalid_argument otherwise: a programming error).

    // `align` (a power of two): the payload starts at a file offset that is a multiple of it, for
    // readers that map the file and read arrays in place. The writer then puts a padding section
    // "pad:NAME" (zero bytes) before it when needed, so such a name has at most 12 characters.
    void add_bytes(const std::string& name, std::string payload, std::size_t align = 1);
    template <class T>
    void add_array(const std::string& name, std::span<const T> values, std::size_t align = 1) {
        static_assert(std::is_trivially_copyable_v<T>);
        std::string bytes(values.size() * sizeof(T), '\0');
        if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
        add_bytes(name, std::move(bytes), align);
    }
    template <class T>
    void add_array(const std::string& name, const std::vector<T>& values, std::size_t align = 1) {
        add_array(name, std::span<const T>(values), align);
    }
    // The same without a copy: the section's payload is `values`' bytes in place, which must stay
    // alive and unchanged until the last serialize() or write() (a large array written once).
    template <class T>
    void add_array_view(const std::string& name, std::span<const T> values, std::size_t align = 1) {
        static_assert(std::is_trivially_copyable_v<T>);
        add_section(name, {}, std::string_view(reinterpret_cast<const char*>(values.data()), values.size_bytes()), align);
    }
    // A section of `size` bytes whose payload comes later, while write(path, fill) runs (a large
    // array written as it is made, never held whole; values known only after it): before fill
    // returns, either set_payload gives its bytes (`size` of them), or the caller writes them
    // itself at payload_offset(name) and set_written gives their size (which may differ from
    // `size` when no section added before fill depends on it) and CRC-32. Sections may be added
    // after it meanwhile.
    void add_reserved(const std::string& name, std::size_t size, std::size_t align = 1);
    void set_payload(const std::string& name, std::string payload);
    void set_written(const std::string& name, std::size_t size, std::uint32_t crc);
    // Where a section's payload starts in the file (after its padding section, if any): it
    // depends on the sizes of the sections before it only.
    std::size_t payload_offset(const std::string& name) const;
    // The whole file as bytes (deterministic), and an atomic write of it (the same bytes, written
    // piece by piece: header, section headers and payloads in place, nothing assembled).
    // serialize() and write(path) take no reserved section.
    std::string serialize() const;
    void write(const std::filesystem::path& path) const;
    // The same with reserved sections: `fill(fd)` writes their payloads into the temporary file
    // (and may add sections after them), then every other byte is written around them.
    void write(const std::filesystem::path& path, const std::function<void(int fd)>& fill);

private:
    struct Section {
        std::string name, owned;
        std::string_view view;  // a borrowed payload (add_array_view); when empty, the payload is `owned`
        std::size_t align = 1;
        bool reserved = false;  // add_reserved: `size` bytes of CRC `crc`, written by the caller
        std::size_t size = 0;
        std::uint32_t crc = 0;
        bool crc_set = false;
        std::string_view payload() const { return view.empty() ? std::string_view(owned) : view; }
        std::size_t payload_size() const { return reserved ? size : payload().size(); }
    };
    void add_section(const std::string& name, std::string owned, std::string_view view, std::size_t align);
    Section& section(const std::string& name);
    // The file as pieces in order: `store` holds the header and the section headers (and the
    // padding), the rest are the payloads' bytes where they are; a reserved payload is a piece
    // of its size with no data (nullptr).
    std::vector<std::string_view> pieces(std::string& store) const;
    Kind kind_;
    std::vector<Section> sections_;
};

// Writes `size` bytes at file offset `offset` of `fd` (pwrite, again after a short write or a
// signal); throws hp::Error(cannot_write) naming `path`.
void write_at(int fd, const void* data, std::size_t size, std::size_t offset, const std::filesystem::path& path);

class Reader {
public:
    // Reads and validates the whole file (header, every section, every checksum). When
    // `expected` is given, a file of another kind is rejected ("is a pointshell, expected ...").
    // Throws hp::Error(bad_input) naming the file and the damage.
    static Reader open(const std::filesystem::path& path, const Kind* expected = nullptr);
    static Reader parse(std::string bytes, const std::string& where, const Kind* expected = nullptr);
    // The same checks over bytes the caller holds (a mapped file): the reader keeps a view of
    // them, which must outlive it and its section views.
    static Reader view(std::string_view bytes, const std::string& where, const Kind* expected = nullptr);

    Kind kind() const { return kind_; }
    std::uint32_t version() const { return version_; }
    const nlohmann::json& metadata() const { return metadata_; }
    std::size_t file_size() const { return all().size(); }

    struct SectionInfo {
        std::string name;
        std::size_t offset;  // of the payload
        std::size_t size;
    };
    const std::vector<SectionInfo>& sections() const { return sections_; }
    bool has(const std::string& name) const;
    std::string_view bytes(const std::string& name) const;  // throws when missing

    // Section as an array of T. `expected_count` (when not SIZE_MAX) must match exactly.
    template <class T>
    std::vector<T> array(const std::string& name, std::size_t expected_count = SIZE_MAX) const {
        static_assert(std::is_trivially_copyable_v<T>);
        std::string_view b = bytes(name);
        if (b.size() % sizeof(T) != 0 || (expected_count != SIZE_MAX && b.size() / sizeof(T) != expected_count))
            fail_input(where_, "section '" + name + "' has " + std::to_string(b.size()) + " bytes, which does not fit " +
                                   (expected_count == SIZE_MAX ? std::string("its element size")
                                                               : std::to_string(expected_count) + " elements"));
        std::vector<T> out(b.size() / sizeof(T));
        if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
        return out;
    }

private:
    // Checks `bytes` and records the sections (offsets, no pointers) and the metadata.
    static Reader check(std::string_view bytes, const std::string& where, const Kind* expected);
    std::string_view all() const { return owned_ ? std::string_view(bytes_) : view_; }

    std::string where_;
    bool owned_ = true;
    std::string bytes_;     // the file, when owned
    std::string_view view_;  // the caller's bytes, when not
    Kind kind_ = Kind::pointshell;
    std::uint32_t version_ = 0;
    nlohmann::json metadata_;
    std::vector<SectionInfo> sections_;
};

}  // namespace hp::container
