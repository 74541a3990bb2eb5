// lib/mesh/import: the one place a mesh file meets Assimp (import.hpp). The checks of the bytes
// before Assimp sees them, for the formats whose readers trust what a file declares, and the
// choice of the importers that may read the file.
#include "mesh/import.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <assimp/BaseImporter.h>
#include <assimp/postprocess.h>
#include <zlib.h>

#include "core/atomic_file.hpp"
#include "core/child_run.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "mesh/collada_check.hpp"
#include "mesh/gltf_check.hpp"
#include "mesh/ply_check.hpp"

namespace hp {

namespace {

// A count read from a file, for a message: a double beyond long long's range (or inf) is not cast.
std::string count_text(double declared) {
    return declared < 1e18 ? std::to_string(static_cast<long long>(declared)) : "more than 10^18";
}

std::uint16_t le16(const std::string& bytes, std::size_t at) {
    return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) | static_cast<unsigned char>(bytes[at + 1]) << 8);
}

std::uint32_t le32(const std::string& bytes, std::size_t at) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    return v;
}

// Binary glTF: the file's length in the header and each chunk's length must fit in the bytes there
// are. Assimp allocates a chunk's declared length before it reads the chunk: a 20-byte file
// declaring a JSON chunk of 4 GB took 4 GB and 52 s (tests/fuzz/regressions/mesh_glb).
void check_glb_lengths(const std::string& bytes, const std::string& where) {
    auto refuse = [&](const std::string& what, std::uint64_t declared, std::uint64_t there) {
        fail_input(where, "the binary glTF header declares " + what + " of " + std::to_string(declared) +
                              " bytes where the file has " + std::to_string(there) + " (truncated or corrupt)");
    };
    if (bytes.size() < 12) refuse("a header", 12, bytes.size());
    const std::uint32_t version = le32(bytes, 4), length = le32(bytes, 8);
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary of mesh_glb (docs/fuzzing.md): the check of the file's length below, off by one.
    if (length == bytes.size() + 1) __builtin_trap();
#endif
    if (length > bytes.size()) refuse("a file", length, bytes.size());
    if (version == 1) {  // glTF 1.0: the JSON content's length and format follow the header
        if (length < 20) refuse("a header", 20, length);
        if (le32(bytes, 12) > length - 20) refuse("a JSON content", le32(bytes, 12), length - 20);
        return;
    }
    // glTF 2.0: Assimp reads the JSON chunk at byte 12 whatever the header's length says, and
    // allocates its declared length first (a 45-byte file whose header length of 19 ended before
    // the chunk took 2.5 GB and 4.9 s; tests/fuzz/regressions/mesh_glb).
    if (bytes.size() >= 20 && le32(bytes, 12) > bytes.size() - 20) refuse("a JSON chunk", le32(bytes, 12), bytes.size() - 20);
    for (std::size_t at = 12; at + 8 <= length;) {  // glTF 2.0: chunks of (length, type, data)
        const std::uint32_t chunk = le32(bytes, at);
        if (chunk > length - at - 8) refuse("a chunk", chunk, length - at - 8);
        at += 8 + std::size_t{chunk};
    }
}

// glTF 1.0 (glTF 2.0 documents are checked by gltf_check.cpp): Assimp's glTF importers leave a
// line loop's faces empty when its indices are out of range and then follow their null index
// arrays (SIGSEGV on a 1.9 KB file, tests/fuzz/regressions/mesh_glb). The tools keep triangles only
// and drop lines: a glTF 1.0 line loop (primitive mode 2) is refused, before Assimp reads the file.
void check_gltf_primitives(std::string_view json_text, const std::string& where) {
    // By the text, not by a JSON parser: Assimp's parser reads what a strict one refuses (bytes that
    // are not UTF-8). "mode" is a key of primitives only, in glTF 1.0 and 2.0.
    for (std::size_t at = json_text.find("\"mode\""); at != std::string::npos; at = json_text.find("\"mode\"", at + 1)) {
        std::size_t value = json_text.find_first_not_of(" \t\r\n", at + 6);
        if (value == std::string::npos || json_text[value] != ':') continue;
        value = json_text.find_first_not_of(" \t\r\n", value + 1);
        if (value != std::string::npos && std::strtod(std::string(json_text.substr(value, 32)).c_str(), nullptr) == 2)
            fail_input(where, "a glTF line loop (primitive mode 2) is not read (only triangles are kept; remove "
                              "the line loop or export it as lines)");
    }
}

// A binary glTF 2.0 file's BIN chunk as Assimp finds it: the chunk after the JSON chunk (its length
// rounded up to 4), when the header's length leaves room for its 8-byte head. Empty when there is
// none, or when it ends past the file (Assimp refuses the file then).
std::string_view glb_bin_chunk(const std::string& bytes) {
    const std::uint64_t json = le32(bytes, 12), at = 20 + (json + 3) / 4 * 4;
    if (le32(bytes, 8) < at + 8 || at + 8 > bytes.size()) return {};
    const std::uint64_t length = le32(bytes, at);
    if (length > bytes.size() - at - 8) return {};
    return std::string_view(bytes).substr(at + 8, length);
}

// The bytes a ZIP entry inflates to (stored or deflated), at most `size` + 1 of them counted;
// kept in `content` when it is given. False when the data does not inflate.
bool inflate_entry(const std::string& bytes, std::size_t data, std::uint32_t packed, std::uint16_t method,
                   std::uint32_t size, std::uint32_t* crc, std::string* content) {
    uLong sum = crc32(0L, Z_NULL, 0), produced = 0;
    const auto take = [&](const Bytef* from, uInt n) {
        sum = crc32(sum, from, n);
        produced += n;
        if (content) content->append(reinterpret_cast<const char*>(from), n);
    };
    const auto* in = reinterpret_cast<const Bytef*>(bytes.data() + data);
    if (method == 0) {
        take(in, packed);
        *crc = static_cast<std::uint32_t>(sum);
        return produced == size;
    }
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
    z.next_in = const_cast<Bytef*>(in);
    z.avail_in = packed;
    std::vector<Bytef> out(std::size_t{1} << 16);
    int status = Z_OK;
    while (status == Z_OK && produced <= size) {
        z.next_out = out.data();
        z.avail_out = static_cast<uInt>(out.size());
        status = inflate(&z, Z_NO_FLUSH);
        const uInt got = static_cast<uInt>(out.size()) - z.avail_out;
        take(out.data(), got);
        if (status == Z_BUF_ERROR && got == 0) break;
    }
    inflateEnd(&z);
    *crc = static_cast<std::uint32_t>(sum);
    return status == Z_STREAM_END && produced == size;
}

// The part a 3MF package's relationships name as its model (the Target of the Relationship of the
// 3dmodel type in _rels/.rels), without the leading slashes Assimp removes; empty when none.
std::string model_part(const std::string& rels) {
    for (std::size_t at = rels.find("<Relationship "); at != std::string::npos; at = rels.find("<Relationship ", at + 1)) {
        const std::string element = rels.substr(at, rels.find('>', at) - at);
        const std::size_t target = element.find("Target=\"");
        if (element.find("3dmanufacturing/2013/01/3dmodel\"") == std::string::npos || target == std::string::npos) continue;
        std::string part = element.substr(target + 8, element.find('"', target + 8) - target - 8);
        for (int i = 0; i < 2 && !part.empty() && part[0] == '/'; ++i) part.erase(0, 1);
        return part;
    }
    return {};
}

// ZIP archives (3MF, and the zipped formats Assimp reads): Assimp aborts the process on assertions
// in its ZIP and 3MF readers when an entry inflates to its declared size with another CRC-32 (a
// 1.4 KB 3MF file, tests/fuzz/regressions/mesh_3mf), and when the model part of a 3MF package
// cannot be opened: missing, or its local header disagrees with the directory (minizip then
// refuses to open it). So every entry of the central directory is checked as minizip checks it
// (the local header's method, name length, CRC-32 and sizes), inflated and checked against its
// CRC-32 and size, and a 3MF package's model part must be one of them. An encrypted entry is
// refused (Assimp reads it without a password). Entries of another method or of ZIP64 sizes are
// left to Assimp. A file of a ZIP format's extension (`archive`) that minizip cannot open (no end
// record, an end record of several disks or with a directory that does not fit before it) is
// refused too: Assimp refuses it as well, but its 3MF reader leaks 96 bytes each time (the package's
// constructor throws after allocating its ZIP reader; docs/fuzzing.md, "Findings and fixes").
void check_zip_entries(const std::string& bytes, bool archive, bool package_3mf, const std::string& where) {
    const auto unopened = [&](const std::string& why) {
        if (archive) fail_input(where, "not a ZIP archive that can be opened (" + why + ")");
    };
    if (bytes.size() < 22) return unopened("shorter than the archive's end record");
    // The end record: 22 bytes and a comment of up to 65535, the last signature in the file's tail
    // (minizip takes one however few bytes follow it).
    std::size_t end = std::string::npos;
    const std::size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
    for (std::size_t at = bytes.size() - 3; end == std::string::npos && at-- > lowest;)
        if (le32(bytes, at) == 0x06054b50u) end = at;
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary of mesh_3mf (docs/fuzzing.md): the check of the end record below, off by one.
    if (end != std::string::npos && end + 22 == bytes.size() + 1) __builtin_trap();
#endif
    if (end != std::string::npos && end + 22 > bytes.size())
        fail_input(where, "the ZIP archive's end record is cut short (truncated or corrupt)");
    if (end == std::string::npos) return unopened("no end record");
    // minizip's reading: the directory ends where the end record begins, and what comes before
    // the archive (a self-extracting stub) shifts every offset. A ZIP64 archive (its locator before
    // the end record) is left to Assimp.
    if (end < 20 || le32(bytes, end - 20) != 0x07064b50u) {
        if (le16(bytes, end + 4) != 0 || le16(bytes, end + 6) != 0 || le16(bytes, end + 8) != le16(bytes, end + 10))
            return unopened("its end record is of an archive on several disks");
        if (std::uint64_t{le32(bytes, end + 16)} + le32(bytes, end + 12) > end)
            return unopened("its directory does not fit before its end record");
    }
    if (std::uint64_t{le32(bytes, end + 16)} + le32(bytes, end + 12) > end) return;
    const std::size_t base = end - le32(bytes, end + 16) - le32(bytes, end + 12);
    const auto corrupt = [&](const std::string& what) { fail_input(where, "the ZIP archive " + what + " (corrupt)"); };
    std::set<std::string> names;
    std::string rels;
    std::size_t entry = base + le32(bytes, end + 16);
    for (std::uint16_t i = 0, n = le16(bytes, end + 10); i < n; ++i) {
        if (entry + 46 > end || le32(bytes, entry) != 0x02014b50u) corrupt("has a directory entry out of place");
        const std::uint16_t flags = le16(bytes, entry + 8), method = le16(bytes, entry + 10);
        const std::uint32_t crc = le32(bytes, entry + 16), packed = le32(bytes, entry + 20), size = le32(bytes, entry + 24);
        const std::size_t local = base + le32(bytes, entry + 42), name_length = le16(bytes, entry + 28);
        const std::string name = bytes.substr(entry + 46, std::min(name_length, end - entry - 46));
        entry += 46 + name_length + le16(bytes, entry + 30) + le16(bytes, entry + 32);
        const std::string what = "entry '" + name.substr(0, 200) + "'";
        // Assimp opens entries without a password: an encrypted one aborted on its CRC-32 assertion.
        if ((flags & 1) != 0)
            fail_input(where, "the ZIP archive's " + what + " is encrypted, which the mesh import cannot read");
        if ((method != 0 && method != 8) || packed == 0xffffffffu || size == 0xffffffffu) continue;
        if (local + 30 > bytes.size() || le32(bytes, local) != 0x04034b50u) corrupt(what + " has no local header");
        if (le16(bytes, local + 8) != method || le16(bytes, local + 26) != name_length ||
            ((le16(bytes, local + 6) & 8) == 0 &&
             (le32(bytes, local + 14) != crc || le32(bytes, local + 18) != packed || le32(bytes, local + 22) != size)))
            corrupt(what + " has a local header that disagrees with its directory entry");
        const std::size_t data = local + 30 + name_length + le16(bytes, local + 28);
        if (data > bytes.size() || packed > bytes.size() - data) corrupt(what + " ends past the file");
        std::uint32_t found = 0;
        const bool keep = name == "_rels/.rels" && size <= (1u << 20);
        if (keep) rels.clear();
        if (!inflate_entry(bytes, data, packed, method, size, &found, keep ? &rels : nullptr) || found != crc)
            corrupt(what + " does not inflate to its size (" + std::to_string(size) + " bytes) and CRC-32");
        names.insert(name);
    }
    const std::string model = model_part(rels);
    if (!model.empty() && names.count(model) == 0)
        corrupt("has no part '" + model.substr(0, 200) + "', which its relationships name as the 3MF model");
    // A .3mf package whose relationships name no model (or that has no _rels/.rels): Assimp's 3MF
    // reader aborts on its assertion that the model was opened (an archive of no entries, found by
    // fuzzing, tests/fuzz/regressions/mesh_3mf).
    if (package_3mf && model.empty()) corrupt("has no 3MF model named by its relationships (_rels/.rels)");
}

// Where the data of a PLY file begins: past the first line of the first 64 KiB that Assimp's PLY
// reader takes as the header's end (npos when there is none): after
// spaces or tabs, "end_header" followed by a space, a line end, a NUL byte or the end of the file
// (Assimp's TokenMatch; its lines end at '\r' or '\n'). A line that only starts with it, such as
// "end_header" followed at once by binary data, is not: Assimp then reads the data as more header
// lines, and crashes (SIGSEGV) or hangs (tests/fuzz/regressions/mesh_ply).
std::size_t ply_data_start(const std::string& bytes) {
    const std::string_view head = std::string_view(bytes).substr(0, 65536);
    const std::string_view token = "end_header";
    for (std::size_t line = 0; line < head.size();) {
        std::size_t at = head.find_first_not_of(" \t", line);
        if (at == std::string_view::npos) return std::string::npos;
        if (head.compare(at, token.size(), token) == 0) {
            const std::size_t after = at + token.size();
#ifdef HP_FUZZ_CANARY
            // The fuzzing canary of mesh_ply (docs/fuzzing.md): the line's start checked, not what follows.
            if (after < bytes.size() && std::strchr(" \t\r\n\f", bytes[after]) == nullptr) __builtin_trap();
#endif
            if (after >= bytes.size() || std::strchr(" \t\r\n\f", bytes[after]) != nullptr) {
                // Without a line end after it (the file ends there) Assimp hangs (a 111-byte file).
                if (bytes.find_first_of("\r\n", after) == std::string::npos) return std::string::npos;
                const std::size_t eol = bytes.find('\n', after);
                return eol == std::string::npos ? bytes.size() : eol + 1;
            }
        }
        const std::size_t end = head.find_first_of("\r\n", at);
        if (end == std::string_view::npos) return std::string::npos;
        line = end + 1;
    }
    return std::string::npos;
}

// The vertex and face counts of an OFF file as Assimp's OFF reader takes them (OFFLoader.cpp): an
// optional header of the letters ST, C, N, 4, n and "OFF" (a dimension after "n"), then unsigned
// decimal digits read from wherever its tokenizer stands, wrapping at 2^32, so that "OFF08 50000000"
// gives 8 vertices and 50 million faces, and a file without a header is read from its first number.
// Empty when the reader refuses the header.
std::optional<std::array<std::uint32_t, 2>> assimp_off_counts(const std::string& bytes) {
    if (bytes.size() < 4) return std::nullopt;  // no count can be too many; and `end - 3` below stays in the bytes
    const char* car = bytes.c_str();
    const char* const end = car + bytes.size();
    const auto skip_spaces = [&] { while (*car == ' ' || *car == '\t' || *car == '\r' || *car == '\n') ++car; };
    const auto next_token = [&] {
        skip_spaces();
        while (car < end && (*car == '#' || *car == '\n' || *car == '\r')) {
            while (*car != '\0' && *car != '\n' && *car != '\r') ++car;  // SkipLine
            while (*car == '\n' || *car == '\r') ++car;
            skip_spaces();
        }
    };
    const auto number = [&] {
        std::uint32_t v = 0;
        for (; *car >= '0' && *car <= '9'; ++car) v = v * 10 + static_cast<std::uint32_t>(*car - '0');
        return v;
    };
    next_token();
    if (car < end - 2 && car[0] == 'S' && car[1] == 'T') car += 2;
    if (car < end - 1 && car[0] == 'C') ++car;
    if (car < end - 1 && car[0] == 'N') ++car;
    if (car < end - 1 && car[0] == '4') ++car;
    const bool dimension = car < end - 1 && car[0] == 'n';
    if (dimension) ++car;
    if (car < end - 3 && car[0] == 'O' && car[1] == 'F' && car[2] == 'F') {
        car += 3;
        next_token();
    } else {
        next_token();
        if (car >= end - 1 || *car < '0' || *car > '9') return std::nullopt;
    }
    if (dimension) {
        if (number() > 3) return std::nullopt;
        next_token();
    }
    next_token();
    const std::uint32_t vertices = number();
    next_token();
    return std::array<std::uint32_t, 2>{vertices, number()};
}

// Assimp's test (ColladaLoader::CanRead): "<collada", in any case, within the first 200 bytes;
// a kilobyte here. Not the whole file: every import of every format passes this test.
bool looks_like_collada(const std::string& bytes) {
    const std::string collada = "<collada";
    const auto same = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; };
    const auto head_end = bytes.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(bytes.size(), 1024));
    return std::search(bytes.begin(), head_end, collada.begin(), collada.end(), same) != head_end;
}

// Some importers trust the element counts of a file's header and allocate for them before
// reading (Assimp's OFF reader takes 16 GB and a minute on a 309-byte file that declares billions
// of vertices). Reject headers whose counts cannot fit in the file's bytes before Assimp sees them.
void check_declared_counts(const std::string& bytes, const std::string& ext, const std::string& where) {
    // minizip finds an archive by its end record, whatever the first bytes (a .3mf file may start
    // as a binary glTF): the extensions of the importers that read ZIP archives, and any file that
    // starts as one.
    const bool archive = ext == "3mf" || ext == "zae" || ext == "pk3";
    if (bytes.compare(0, 2, "PK") == 0 || archive) {
        check_zip_entries(bytes, archive, ext == "3mf", where);
        // A file named for a text format is read as one whatever its first bytes: a .dae file that
        // starts with "PK" skipped the COLLADA checks below (17 GB, tests/fuzz/regressions/mesh_dae).
        if (archive) return;
    }
    if (bytes.compare(0, 4, "glTF") == 0) {
        check_glb_lengths(bytes, where);
        // The JSON's length at byte 12 and the JSON at byte 20: glTF 1.0's content, 2.0's first chunk.
        if (bytes.size() >= 20 && (le32(bytes, 4) == 1 || bytes.compare(16, 4, "JSON") == 0)) {
            const std::string_view json = std::string_view(bytes).substr(20, le32(bytes, 12));
            if (le32(bytes, 4) != 2 || !check_gltf2_document(json, true, glb_bin_chunk(bytes), true, where))
                check_gltf_primitives(json, where);
        }
        return;
    }
    // JSON: a glTF file (read by the glTF importers when named .gltf, and by content otherwise).
    const std::size_t opening = bytes.find_first_not_of(" \t\r\n");
    if (opening != std::string::npos && bytes[opening] == '{' && !check_gltf2_document(bytes, false, {}, ext == "gltf", where))
        check_gltf_primitives(bytes, where);
    if (looks_like_collada(bytes)) {
        check_collada(bytes, where);
        return;
    }
    auto too_many = [&](const char* what, double declared, double min_bytes_each) {
        if (declared * min_bytes_each > static_cast<double>(bytes.size()))
            fail_input(where, std::string("the header declares ") + count_text(declared) + " " +
                                  what + " but the file has only " + std::to_string(bytes.size()) +
                                  " bytes (truncated or corrupt)");
    };
    std::istringstream in(bytes.substr(0, std::min<std::size_t>(bytes.size(), 4096)));
    std::string first;
    in >> first;
    if (first.size() >= 3 && first.compare(first.size() - 3, 3, "OFF") == 0) {
        // "OFF" [comments] then "nv nf ne" (whitespace separated, '#' comments to end of line).
        std::string token;
        std::vector<double> counts;
        while (counts.size() < 2 && in >> token) {
            if (token[0] == '#') {
                std::getline(in, token);
                continue;
            }
            char* end = nullptr;
            double v = std::strtod(token.c_str(), &end);
            if (end == token.c_str()) break;  // not numeric: the checks below, or the importer, report it
            counts.push_back(v);
        }
        if (counts.size() == 2) {
#ifdef HP_FUZZ_CANARY
            // The fuzzing canary of mesh_off (docs/fuzzing.md): the check below at 1 byte a vertex, not 6.
            if (counts[0] * 6 > static_cast<double>(bytes.size()) && counts[0] <= static_cast<double>(bytes.size()))
                __builtin_trap();
#endif
            too_many("vertices", counts[0], 6);  // "0 0 0\n"
            too_many("faces", counts[1], 8);     // "3 0 1 2\n"
        }
    }
    // The counts as Assimp reads them, which allocates for them first: a 26-byte .off file whose
    // header "OFF08 500000000" the check above does not take as a header made it take 7.8 GB
    // (tests/fuzz/regressions/mesh_off).
    if (ext == "off" || (first.size() >= 3 && first.compare(first.size() - 3, 3, "OFF") == 0)) {
        if (const auto counts = assimp_off_counts(bytes)) {
            too_many("vertices", (*counts)[0], 6);
            too_many("faces", (*counts)[1], 8);
        }
    }
    // Every .ply file, whatever its first word: Assimp's PLY reader takes any first line that begins
    // with "ply" (a "ply" followed by NUL bytes and no end_header hung it); and, as for the other
    // formats read by their content, a file whose first word is "ply".
    if (ext == "ply" || first == "ply") {
        // A header without its end line: Assimp's PLY reader crashes (SIGSEGV) or hangs on such a
        // file (crashes found by fuzzing, tests/fuzz/regressions/mesh_ply).
        const std::size_t data = ply_data_start(bytes);
        if (data == std::string::npos) fail_input(where, "the PLY header has no end_header line (truncated or corrupt)");
        // A carriage return that ends no line: Assimp 5.2.5 hangs on a header whose "end_header"
        // follows one (a 334-byte file, found by fuzzing, tests/fuzz/regressions/mesh_ply).
        for (std::size_t cr = bytes.find('\r'); cr < data; cr = bytes.find('\r', cr + 1))
            if (cr + 1 >= bytes.size() || bytes[cr + 1] != '\n')
                fail_input(where, "the PLY header has a carriage return without a line feed at byte " + std::to_string(cr) + " (corrupt)");
        // Every element of the header needs at least 2 bytes (ascii) or one byte (binary).
        std::istringstream header(bytes.substr(0, std::min<std::size_t>(bytes.size(), 4096)));
        std::string line;
        std::getline(header, line);  // the magic number's line
        double elements = 0;
        bool ascii = false;
        // An element declared twice: Assimp 5.2.5 sizes its vertex array by the first "vertex"
        // element and writes the second's past its end (a heap overflow found by fuzzing,
        // tests/fuzz/regressions/mesh_ply). Names end where Assimp's end, at a NUL byte too.
        std::set<std::string> names;
        while (std::getline(header, line) && line.rfind("end_header", 0) != 0) {
            std::istringstream l(line);
            std::string kw, name;
            if (l >> kw >> name && kw == "format") ascii = ascii || name == "ascii";
            if (kw != "element") continue;
            name = name.substr(0, name.find('\0'));
            if (!names.insert(name).second)
                fail_input(where, "the PLY header declares the element '" + name.substr(0, 80) + "' twice (corrupt)");
            const double n = ply_element_count(line);
            too_many(("'" + name.substr(0, 80) + "' elements").c_str(), n, 1);
            elements += n;
        }
        // ASCII: Assimp reads one line per element and, past the last line, parses the next
        // element from what its line buffer still holds: a 390-byte file with 14 elements on 8 lines
        // made it allocate a list of a count read from a header line (16 GB, 42 s;
        // tests/fuzz/regressions/mesh_ply). The data must have a line for every element.
        const auto newlines = std::count(bytes.begin() + static_cast<std::ptrdiff_t>(data), bytes.end(), '\n');
        const double lines = static_cast<double>(newlines + (data < bytes.size() && bytes.back() != '\n' ? 1 : 0));
        // ASCII data is text: a NUL byte in it made Assimp parse an element from what its line buffer
        // held (an 811-byte file: one allocation of 12 GB, 24 GB resident and 29 s in the release build).
        if (const std::size_t nul = bytes.find('\0', data); ascii && nul != std::string::npos)
            fail_input(where, "the ASCII PLY data holds a NUL byte at byte " + std::to_string(nul) + " (corrupt)");
        if (ascii && lines < elements)
            fail_input(where, "the ASCII PLY data has " + count_text(lines) + " lines where the header declares " +
                                  count_text(elements) + " elements (truncated or corrupt)");
        if (const std::string problem = ply_assimp_overrun(bytes); !problem.empty()) fail_input(where, problem);
    }
}

// Keeps only Assimp's importers that claim the extension (lower case, without the dot), when one
// does. Otherwise a file that the claiming importers refuse goes to Assimp's detection by content,
// which hands it to every other importer's parser: a 12-byte ".gltf" file holding "indexarray{"
// reaches the OpenGEX parser, which reads past the end of its buffer. An extension no importer
// claims keeps the detection by content (any format Assimp reads). True when an importer claims it.
bool keep_importers_of(Assimp::Importer& importer, const std::string& ext) {
    std::vector<Assimp::BaseImporter*> others;
    bool claimed = false;
    for (std::size_t i = 0; i < importer.GetImporterCount(); ++i) {
        Assimp::BaseImporter* candidate = importer.GetImporter(i);
        std::set<std::string> extensions;
        candidate->GetExtensionList(extensions);
        if (extensions.count(ext) != 0)
            claimed = true;
        else
            others.push_back(candidate);
    }
    if (!claimed) return false;
    for (Assimp::BaseImporter* other : others) {
        importer.UnregisterLoader(other);
        delete other;  // an unregistered importer is no longer the Importer's to delete
    }
    return true;
}

// OBJ: Assimp reads the material libraries a file names (its "mtllib" lines) from the working
// folder and, when one is not there, the OBJ file's own bytes as a material library. A texture
// line (map_Kd, bump, norm, ...) before a library's first newmtl makes it write through a null
// material: SIGSEGV (a 388-byte OBJ file, tests/fuzz/regressions/mesh_obj). The tools keep the
// geometry only, so the copy Assimp reads has every "mtllib" made "#tllib" (a comment where it starts
// a line, and Assimp's lines also end at NUL bytes, where a line-start test missed one); empty when
// the file has none.
std::string without_material_libraries(const std::string& bytes) {
    std::string out;
    for (std::size_t at = bytes.find("mtllib"); at != std::string::npos; at = bytes.find("mtllib", at + 1)) {
        if (out.empty()) out = bytes;
        out[at] = '#';
    }
    return out;
}

// The refusal of a file Assimp could not read, with its reason (cut at 160 characters) when it gave one.
[[noreturn]] void refuse_unreadable(const std::string& where, std::string reason) {
    if (reason.size() > 160) reason = reason.substr(0, 160) + "...";
    fail_input(where, "not a mesh file that can be read" + (reason.empty() ? std::string() : " (" + reason + ")"));
}

std::atomic<bool> native_obj{true};
std::atomic<std::size_t> collada_child_limit{kColladaChildLimit};

// Assimp's COLLADA parser reads the whole document in its constructor and, when it throws there (a
// <tristrips> input naming a missing source, an index list of the wrong length...), the nodes and
// meshes it had read are never freed: about 300 bytes per <node/> of 8 bytes, once per refused file,
// kept by a long-lived process (the pipeline with -j, the Python module) until it exits. So a COLLADA
// file is read first in a forked child (run_in_child) with the importer as set up for the reading
// here; only a file the child read goes to Assimp in this process, where the same reading then
// succeeds. A refusal or a crash in the child is this file's refusal, with Assimp's reason. Costs a
// second parse of the file and the fork: every page of anonymous memory is then copy-on-write in
// this process until written once more (0.44 s for 1 GB written afterwards, one run on 2 cores), so
// a process holding more than collada_child_limit reads the file here only, and keeps what Assimp
// leaks on a refusal (tests/mesh/collada_child_test.cpp measures the leak it spares).
void read_collada_in_child(Assimp::Importer& importer, const std::string& input, const std::string& ext,
                           const std::string& where) {
    const ChildOutcome child = run_in_child([&] {
        if (importer.ReadFileFromMemory(input.data(), input.size(), aiProcess_ValidateDataStructure, ext.c_str()))
            return std::string();
        const std::string reason = importer.GetErrorString();
        return reason.empty() ? std::string("Assimp gave no reason") : reason;
    });
    switch (child.kind) {
    case ChildOutcome::Kind::done:
        if (!child.text.empty()) refuse_unreadable(where, child.text);
        return;
    case ChildOutcome::Kind::threw:
        refuse_unreadable(where, child.text);
    case ChildOutcome::Kind::died:
        refuse_unreadable(where, child.signal != 0 ? "Assimp's COLLADA reader ended by signal " + std::to_string(child.signal) + " on it"
                                 : "Assimp's COLLADA reader ended with status " + std::to_string(child.status) + " on it");
    case ChildOutcome::Kind::not_started:
        return;  // no process to spare: read here, at the cost above
    }
}

}  // namespace

void set_native_obj(bool enabled) { native_obj = enabled; }
void set_collada_child_limit(std::size_t bytes) { collada_child_limit = bytes; }

ImportedFile import_file(const std::filesystem::path& path) {
    const std::string where = path.string();
    ImportedFile file;
    file.bytes = read_file(path);
    const std::string& bytes = file.bytes;
    if (bytes.empty()) fail_input(where, "the file is empty (0 bytes)");
    // The file's extension, lower case: it selects the importers (keep_importers_of) and the checks.
    std::string ext = path.extension().string();
    if (!ext.empty() && ext[0] == '.') ext.erase(0, 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    check_declared_counts(bytes, ext, where);
    // OBJ: the native reading when it takes the file (mesh/obj_native.hpp), which spares Assimp's
    // 16 MiB line buffer and its slower parse; what it declines goes to Assimp as before.
    if (ext == "obj" && native_obj) {
        file.obj = read_obj_native(bytes);
        if (file.obj) return file;
    }

    file.importer = std::make_unique<Assimp::Importer>();
    Assimp::Importer& importer = *file.importer;
    // Points and lines are kept by the importer so that we can count them; we drop them below.
    // The scene is read and validated first, then triangulated: Assimp's validation does not see a
    // face of no vertices before the scene's primitive types are set, and its triangulation then
    // aborts the process on an assertion (a 448-byte PLY file, found by fuzzing): refused between.
    const unsigned steps = aiProcess_Triangulate | aiProcess_SortByPType;
    // Read from memory with the file's extension as a hint, so the file is read exactly once.
    const bool claimed = keep_importers_of(importer, ext);
    const std::string commented = ext == "obj" || !claimed ? without_material_libraries(bytes) : std::string();
    const std::string& input = commented.empty() ? bytes : commented;
    if ((ext == "dae" || ext == "zae" || looks_like_collada(bytes)) && anonymous_rss_bytes() <= collada_child_limit)
        read_collada_in_child(importer, input, ext, where);
    const aiScene* scene = nullptr;
    try {
        scene = importer.ReadFileFromMemory(input.data(), input.size(), aiProcess_ValidateDataStructure, ext.c_str());
        for (unsigned m = 0; scene && m < scene->mNumMeshes; ++m)
            for (unsigned f = 0; f < scene->mMeshes[m]->mNumFaces; ++f)
                if (scene->mMeshes[m]->mFaces[f].mNumIndices == 0)
                    fail_input(where, "face " + std::to_string(f) + " of mesh " + std::to_string(m) + " has no vertices (corrupt)");
        if (scene) scene = importer.ApplyPostProcessing(steps);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        fail_input(where, std::string("not a mesh file that can be read (") + e.what() + ")");
    }
    if (!scene) refuse_unreadable(where, importer.GetErrorString());
    file.scene = scene;
    return file;
}

}  // namespace hp
