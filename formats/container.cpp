#include "formats/container.hpp"

#include <fstream>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"

namespace hp::container {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'H', 'A', 'P', 'T', 'I', 'C', 'P', 'F'};
constexpr std::size_t kHeaderSize = 40;
constexpr std::size_t kSectionHeaderSize = 32;
constexpr std::size_t kNameSize = 16;

const char* tag_of(Kind k) {
    switch (k) {
    case Kind::pointshell: return "SHEL";
    case Kind::tree: return "TREE";
    case Kind::cfm: return "CFM_";
    case Kind::octree: return "OCT_";
    }
    return "????";
}

template <class T>
void put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}
template <class T>
T get(const std::string& in, std::size_t at) {
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    return v;
}

// For a truncated file: ", in section 'name'" (or its header) where the bytes end, found by
// walking the section headers that are complete and intact; "" when that cannot be told.
std::string where_cut(const std::string& bytes) {
    const std::uint32_t count = get<std::uint32_t>(bytes, 24);
    std::size_t at = kHeaderSize;
    for (std::uint32_t s = 0; s < count; ++s) {
        if (at + kSectionHeaderSize > bytes.size()) return ", in the header of section " + std::to_string(s + 1);
        if (crc32(bytes.data() + at, 28) != get<std::uint32_t>(bytes, at + 28)) return "";
        std::string name(bytes.data() + at, kNameSize);
        name.resize(std::strlen(name.c_str()));
        const std::uint64_t size = get<std::uint64_t>(bytes, at + 16);
        const std::size_t payload = at + kSectionHeaderSize;
        if (size > bytes.size() - payload) return ", in section '" + name + "'";
        at = payload + static_cast<std::size_t>(size);
    }
    return "";
}

}  // namespace

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::pointshell: return "pointshell";
    case Kind::tree: return "point-sphere tree";
    case Kind::cfm: return "closest feature map";
    case Kind::octree: return "octree";
    }
    return "?";
}

bool looks_like_container(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    return in.read(magic, 8) && std::memcmp(magic, kMagic, 8) == 0;
}

Writer::Writer(Kind kind, nlohmann::json metadata) : kind_(kind) {
    if (!metadata.is_object()) metadata = nlohmann::json::object();
    if (!metadata.contains("tool_version")) metadata["tool_version"] = kVersion;
    if (!metadata.contains("sign_convention")) metadata["sign_convention"] = "inside_positive";
    sections_.emplace_back("meta", metadata.dump());
}

void Writer::add_bytes(const std::string& name, std::string payload) {
    // Programming errors, not bad input: the callers name their sections.
    if (name.empty() || name.size() > kNameSize || name.find('\0') != std::string::npos)
        throw std::invalid_argument("section name must have 1-16 characters: '" + name + "'");
    for (const auto& section : sections_)
        if (section.first == name) throw std::invalid_argument("duplicate section name '" + name + "'");
    sections_.emplace_back(name, std::move(payload));
}

std::string Writer::serialize() const {
    std::size_t total = kHeaderSize;
    for (const auto& [name, payload] : sections_) total += kSectionHeaderSize + payload.size();
    std::string out;
    out.reserve(total);
    out.append(kMagic, 8);
    put<std::uint32_t>(out, kFormatVersion);
    out.append(tag_of(kind_), 4);
    put<std::uint64_t>(out, total);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(sections_.size()));
    put<std::uint32_t>(out, 0);
    put<std::uint32_t>(out, crc32(out.data(), out.size()));
    put<std::uint32_t>(out, 0);
    for (const auto& [name, payload] : sections_) {
        const std::size_t start = out.size();
        std::string padded = name;
        padded.resize(kNameSize, '\0');
        out += padded;
        put<std::uint64_t>(out, payload.size());
        put<std::uint32_t>(out, crc32(payload.data(), payload.size()));
        put<std::uint32_t>(out, crc32(out.data() + start, out.size() - start));
        out += payload;
    }
    return out;
}

void Writer::write(const fs::path& path) const { write_file_atomically(path, serialize()); }

Reader Reader::open(const fs::path& path, const Kind* expected) {
    return parse(read_file(path), path.string(), expected);
}

Reader Reader::parse(std::string bytes, const std::string& where, const Kind* expected) {
    Reader r;
    r.where_ = where;
    if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
        fail_input(where, bytes.empty() ? "the file is empty (0 bytes)" : "not a hapticprep file (wrong magic bytes)");
    if (bytes.size() < kHeaderSize)
        fail_input(where, "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the header");
    if (crc32(bytes.data(), 32) != get<std::uint32_t>(bytes, 32) || get<std::uint32_t>(bytes, 36) != 0)
        fail_input(where, "corrupt: header checksum mismatch");
    r.version_ = get<std::uint32_t>(bytes, 8);
    if (r.version_ > kFormatVersion)
        fail_input(where, "written by a newer hapticprep (format v" + std::to_string(r.version_) +
                              "); this build reads up to v" + std::to_string(kFormatVersion));
    if (r.version_ == 0) fail_input(where, "corrupt: format version 0");
    const std::string tag = bytes.substr(12, 4);
    bool known = false;
    for (Kind k : {Kind::pointshell, Kind::tree, Kind::cfm, Kind::octree})
        if (tag == tag_of(k)) {
            r.kind_ = k;
            known = true;
        }
    if (!known) fail_input(where, "unknown kind of hapticprep file ('" + tag + "'; written by a newer version?)");
    const std::uint64_t declared = get<std::uint64_t>(bytes, 16);
    if (declared > bytes.size())
        fail_input(where, "truncated at byte " + std::to_string(bytes.size()) + " of " + std::to_string(declared) +
                              where_cut(bytes) + " (the copy is incomplete; copy or make it again)");
    if (declared < bytes.size())
        fail_input(where, "corrupt: " + std::to_string(bytes.size() - declared) + " unexpected bytes after the end");
    if (expected && *expected != r.kind_)
        fail_input(where, std::string("is a ") + kind_name(r.kind_) + ", expected a " + kind_name(*expected));

    const std::uint32_t count = get<std::uint32_t>(bytes, 24);
    std::size_t at = kHeaderSize;
    for (std::uint32_t s = 0; s < count; ++s) {
        if (at + kSectionHeaderSize > bytes.size())
            fail_input(where, "corrupt: the header of section " + std::to_string(s + 1) + " runs past the end of the file");
        if (crc32(bytes.data() + at, 28) != get<std::uint32_t>(bytes, at + 28))
            fail_input(where, "corrupt: checksum mismatch in the header of section " + std::to_string(s + 1));
        std::string name(bytes.data() + at, kNameSize);
        name.resize(std::strlen(name.c_str()));
        const std::uint64_t size = get<std::uint64_t>(bytes, at + 16);
        const std::size_t payload = at + kSectionHeaderSize;
        if (size > bytes.size() - payload) fail_input(where, "corrupt: section '" + name + "' runs past the end of the file");
        if (crc32(bytes.data() + payload, size) != get<std::uint32_t>(bytes, at + 24))
            fail_input(where, "corrupt: checksum mismatch in section '" + name + "'");
        r.sections_.push_back({name, payload, static_cast<std::size_t>(size)});
        at = payload + size;
    }
    if (at != bytes.size()) fail_input(where, "corrupt: the sections do not fill the file");
    if (r.sections_.empty() || r.sections_[0].name != "meta") fail_input(where, "corrupt: no metadata section");
    for (std::size_t a = 0; a < r.sections_.size(); ++a)
        for (std::size_t b = a + 1; b < r.sections_.size(); ++b)
            if (r.sections_[a].name == r.sections_[b].name)
                fail_input(where, "corrupt: two sections named '" + r.sections_[a].name + "'");
    r.bytes_ = std::move(bytes);
    try {
        r.metadata_ = nlohmann::json::parse(r.bytes("meta"));
    } catch (const nlohmann::json::exception&) {
        fail_input(where, "corrupt: the metadata block is not valid JSON");
    }
    if (!r.metadata_.is_object()) fail_input(where, "corrupt: the metadata block is not a JSON object");
    return r;
}

bool Reader::has(const std::string& name) const {
    for (const auto& s : sections_)
        if (s.name == name) return true;
    return false;
}

std::string_view Reader::bytes(const std::string& name) const {
    for (const auto& s : sections_)
        if (s.name == name) return std::string_view(bytes_).substr(s.offset, s.size);
    fail_input(where_, "has no '" + name + "' section (written by an older version, or not this kind of file)");
}

}  // namespace hp::container
