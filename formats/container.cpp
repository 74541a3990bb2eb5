#include "formats/container.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
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
    case Kind::sampler: return "SMPL";
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
T get(std::string_view in, std::size_t at) {
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    return v;
}

// For a truncated file: ", in section 'name'" (or its header) where the bytes end, found by
// walking the section headers that are complete and intact; "" when that cannot be told.
std::string where_cut(std::string_view bytes) {
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
    case Kind::sampler: return "prepared sampler";
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
    sections_.push_back({.name = "meta", .owned = metadata.dump(), .view = {}, .align = 1});
}

void Writer::add_bytes(const std::string& name, std::string payload, std::size_t align) {
    add_section(name, std::move(payload), {}, align);
}

void Writer::add_section(const std::string& name, std::string owned, std::string_view view, std::size_t align) {
    // Programming errors, not bad input: the callers name their sections.
    if (name.empty() || name.size() > kNameSize || name.find('\0') != std::string::npos)
        throw std::invalid_argument("section name must have 1-16 characters: '" + name + "'");
    if (align == 0 || (align & (align - 1)) != 0 || (align > 1 && name.size() > kNameSize - 4))
        throw std::invalid_argument("an aligned section needs a power of two and a name of at most 12 characters: '" + name + "'");
    for (const auto& section : sections_)
        if (section.name == name || section.name == "pad:" + name || "pad:" + section.name == name)
            throw std::invalid_argument("duplicate section name '" + name + "'");
    sections_.push_back({.name = name, .owned = std::move(owned), .view = view, .align = align});
}

void Writer::add_reserved(const std::string& name, std::size_t size, std::size_t align) {
    add_section(name, {}, {}, align);
    sections_.back().reserved = true;
    sections_.back().size = size;
}

Writer::Section& Writer::section(const std::string& name) {
    for (Section& s : sections_)
        if (s.name == name) return s;
    throw std::invalid_argument("no section '" + name + "'");
}

void Writer::set_payload(const std::string& name, std::string payload) {
    Section& s = section(name);
    if (!s.reserved || s.crc_set || payload.size() != s.size)
        throw std::invalid_argument("section '" + name + "' is not reserved for these bytes or already written");
    s.owned = std::move(payload);
    s.reserved = false;
}

void Writer::set_written(const std::string& name, std::size_t size, std::uint32_t crc) {
    Section& s = section(name);
    if (!s.reserved) throw std::invalid_argument("section '" + name + "' is not reserved");
    s.size = size;
    s.crc = crc;
    s.crc_set = true;
}

namespace {
// The padding before a payload of alignment `align` whose section header would start at `total`:
// 0 when none is needed, else the padding section's payload bytes.
std::size_t padding_at(std::size_t total, std::size_t align, bool& needed) {
    needed = (total + kSectionHeaderSize) % align != 0;
    return needed ? (2 * align - (total + 2 * kSectionHeaderSize) % align) % align : 0;
}
}  // namespace

std::size_t Writer::payload_offset(const std::string& name) const {
    std::size_t total = kHeaderSize;
    for (const Section& s : sections_) {
        bool pad = false;
        const std::size_t zeros = padding_at(total, s.align, pad);
        if (pad) total += kSectionHeaderSize + zeros;
        total += kSectionHeaderSize;
        if (s.name == name) return total;
        total += s.payload_size();
    }
    throw std::invalid_argument("no section '" + name + "'");
}

std::vector<std::string_view> Writer::pieces(std::string& store) const {
    // The sections as written: each aligned one after its padding section when it needs one.
    struct Piece {
        std::string name;
        const Section* section = nullptr;  // null: a padding section
        std::size_t zeros = 0;  // a padding section: its payload, this many zero bytes
    };
    std::vector<Piece> order;
    std::size_t total = kHeaderSize, padding = 0;
    for (const Section& s : sections_) {
        bool pad = false;
        const std::size_t zeros = padding_at(total, s.align, pad);
        if (pad) {
            // A padding section's header and payload move the next payload to the boundary.
            order.push_back({"pad:" + s.name, nullptr, zeros});
            padding += zeros;
            total += kSectionHeaderSize + zeros;
        }
        if (s.reserved && !s.crc_set) throw std::logic_error("reserved section '" + s.name + "' was not written");
        order.push_back({s.name, &s, 0});
        total += kSectionHeaderSize + s.payload_size();
    }
    // Every byte `store` will hold, reserved first: the views into it stay valid.
    store.clear();
    store.reserve(kHeaderSize + order.size() * kSectionHeaderSize + padding);
    store.append(kMagic, 8);
    put<std::uint32_t>(store, kFormatVersion);
    store.append(tag_of(kind_), 4);
    put<std::uint64_t>(store, total);
    put<std::uint32_t>(store, static_cast<std::uint32_t>(order.size()));
    put<std::uint32_t>(store, 0);
    put<std::uint32_t>(store, crc32(store.data(), store.size()));
    put<std::uint32_t>(store, 0);
    std::vector<std::string_view> out;
    std::size_t held = 0;  // of `store`, in `out` already
    for (const Piece& p : order) {
        const bool pad = p.section == nullptr;
        const std::string zeros(p.zeros, '\0');
        const std::string_view payload = pad ? std::string_view(zeros) : p.section->payload();
        const std::size_t size = pad ? zeros.size() : p.section->payload_size();
        const std::size_t start = store.size();
        std::string padded = p.name;
        padded.resize(kNameSize, '\0');
        store += padded;
        put<std::uint64_t>(store, size);
        put<std::uint32_t>(store, !pad && p.section->reserved ? p.section->crc : crc32(payload.data(), payload.size()));
        put<std::uint32_t>(store, crc32(store.data() + start, store.size() - start));
        if (pad) {
            store += zeros;
        } else if (size > 0) {
            out.emplace_back(store.data() + held, store.size() - held);
            held = store.size();
            out.push_back(p.section->reserved ? std::string_view(nullptr, size) : payload);
        }
    }
    if (store.size() > held) out.emplace_back(store.data() + held, store.size() - held);
    return out;
}

std::string Writer::serialize() const {
    std::string store, out;
    const std::vector<std::string_view> parts = pieces(store);
    std::size_t total = 0;
    for (std::string_view p : parts) total += p.size();
    out.reserve(total);
    for (std::string_view p : parts) {
        if (p.data() == nullptr) throw std::logic_error("a reserved section cannot be serialized");
        out += p;
    }
    return out;
}

void Writer::write(const fs::path& path) const {
    std::string store;
    const std::vector<std::string_view> parts = pieces(store);
    write_atomically(path, [&](const fs::path& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail_write(path.string(), std::string("cannot create a file here (") + std::strerror(errno) + ")");
        for (std::string_view p : parts) {
            if (p.data() == nullptr) throw std::logic_error("a reserved section needs write(path, fill)");
            out.write(p.data(), static_cast<std::streamsize>(p.size()));
        }
        out.close();
        if (!out) fail_write(path.string(), "write failed (disk full?)");
    });
}

void Writer::write(const fs::path& path, const std::function<void(int fd)>& fill) {
    write_atomically(path, [&](const fs::path& tmp) {
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) fail_write(path.string(), std::string("cannot create a file here (") + std::strerror(errno) + ")");
        struct Closer {
            int fd;
            ~Closer() {
                if (fd >= 0) ::close(fd);
            }
        } closer{fd};
        fill(fd);
        std::string store;
        std::size_t at = 0;
        for (std::string_view p : pieces(store)) {
            if (p.data() != nullptr) write_at(fd, p.data(), p.size(), at, path);
            at += p.size();
        }
        const int rc = ::close(closer.fd);
        closer.fd = -1;
        if (rc != 0) fail_write(path.string(), std::string("write failed (") + std::strerror(errno) + ")");
    });
}

void write_at(int fd, const void* data, std::size_t size, std::size_t offset, const fs::path& path) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_write(path.string(), std::string("write failed (") + (n < 0 ? std::strerror(errno) : "no progress") + "; disk full?)");
        p += n, size -= static_cast<std::size_t>(n), offset += static_cast<std::size_t>(n);
    }
}

Reader Reader::open(const fs::path& path, const Kind* expected) {
    return parse(read_file(path), path.string(), expected);
}

Reader Reader::check(std::string_view bytes, const std::string& where, const Kind* expected) {
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
    const std::string tag(bytes.substr(12, 4));
    bool known = false;
    for (Kind k : {Kind::pointshell, Kind::tree, Kind::cfm, Kind::octree, Kind::sampler})
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
    try {
        const SectionInfo& meta = r.sections_[0];
        r.metadata_ = nlohmann::json::parse(bytes.substr(meta.offset, meta.size));
    } catch (const nlohmann::json::exception&) {
        fail_input(where, "corrupt: the metadata block is not valid JSON");
    }
    if (!r.metadata_.is_object()) fail_input(where, "corrupt: the metadata block is not a JSON object");
    return r;
}

Reader Reader::parse(std::string bytes, const std::string& where, const Kind* expected) {
    Reader r = check(bytes, where, expected);
    r.bytes_ = std::move(bytes);
    return r;
}

Reader Reader::view(std::string_view bytes, const std::string& where, const Kind* expected) {
    Reader r = check(bytes, where, expected);
    r.owned_ = false;
    r.view_ = bytes;
    return r;
}

bool Reader::has(const std::string& name) const {
    for (const auto& s : sections_)
        if (s.name == name) return true;
    return false;
}

std::string_view Reader::bytes(const std::string& name) const {
    for (const auto& s : sections_)
        if (s.name == name) return all().substr(s.offset, s.size);
    fail_input(where_, "has no '" + name + "' section (written by an older version, or not this kind of file)");
}

}  // namespace hp::container
