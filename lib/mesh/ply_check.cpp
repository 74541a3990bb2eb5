// lib/mesh/ply_check (ply_check.hpp).
#include "mesh/ply_check.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

namespace hp {

namespace {

// The instance count of a PLY "element" line as Assimp's PLY reader takes it (PlyParser.cpp): the
// number after a name it knows (vertex, face, tristrips, edge, material; TextureFile has none), but
// for any other name the digits that name itself starts with, as unsigned decimal digits wrapping at
// 2^32. It allocates 24 bytes for each instance of such an element first: "element" followed by a
// name of 103 fives made it ask for 91.6 GB (a 358-byte file, tests/fuzz/regressions/mesh_ply).
std::uint32_t assimp_ply_count(const std::string& line) {
    std::size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || line.compare(at, 7, "element") != 0) return 0;
    at = std::min(line.find_first_not_of(" \t", at + 7), line.size());
    const auto token = [&](const std::string& name) {
        const std::size_t end = at + name.size();
        return line.compare(at, name.size(), name) == 0 && (end == line.size() || std::strchr(" \t\r\n\f", line[end]) != nullptr);
    };
    if (token("TextureFile")) return 0;
    for (const std::string name : {"vertex", "face", "tristrips", "edge", "material"}) {
        if (!token(name)) continue;
        at = std::min(line.find_first_not_of(" \t", std::min(at + name.size() + 1, line.size())), line.size());
        break;
    }
    std::uint32_t v = 0;
    for (; at < line.size() && line[at] >= '0' && line[at] <= '9'; ++at) v = v * 10 + static_cast<std::uint32_t>(line[at] - '0');
    return v;
}

}  // namespace

double ply_element_count(const std::string& line) {
    std::istringstream l(line);
    std::string kw, name;
    double n = 0;
    return l >> kw >> name >> n ? std::max(n, static_cast<double>(assimp_ply_count(line))) : assimp_ply_count(line);
}

namespace {

// Assimp 5.2.5's PLY reader, followed step by step on the file's bytes as far as its allocations
// depend on them (PlyParser.cpp, PlyLoader.cpp, IOStreamBuffer.h, ParsingUtils.h): its line buffer
// (a line is copied to the buffer's front, what longer lines left behind it stays and is read when
// the parser runs past the line's end), its header parser (which also takes a "comment" line for an
// element), and its reads of the data. Nothing is allocated for the file's contents.
bool line_end(char c) { return c == '\r' || c == '\n' || c == '\0' || c == '\f'; }
bool space(char c) { return c == ' ' || c == '\t'; }

// The parser's line buffer: a vector erased from its front as tokens are taken and refilled at its
// front by each line; past what was ever written it holds zeros.
struct LineBuffer {
    std::string s;
    std::size_t off = 0;
    char operator[](std::size_t i) const { return off + i < s.size() ? s[off + i] : '\0'; }
    void put(std::size_t i, char c) {
        if (off + i >= s.size()) s.resize(off + i + 1, '\0');
        s[off + i] = c;
    }
    void erase(std::size_t k) {
        off = std::min(off + k, s.size());
        if (off > 4096 && off * 2 > s.size()) {
            s.erase(0, off);
            off = 0;
        }
    }
};

class AssimpPly {
public:
    explicit AssimpPly(const std::string& bytes) : b_(bytes) {}

    // IOStreamBuffer::getNextLine: past the file's end the cache holds line feeds. True when a line
    // was copied to the buffer's front (Assimp says false for a last line without a line end, and
    // leaves the bytes behind it in place).
    bool next_line(LineBuffer& buf) {
        if (pos_ >= b_.size()) return false;
        if (line_end(at(pos_))) {
            while (at(pos_) != '\n') ++pos_;
            if (++pos_ >= b_.size()) return false;
        }
        std::size_t i = 0;
        while (!line_end(at(pos_))) {
            buf.put(i++, at(pos_));
            if (++pos_ >= b_.size()) return true;  // the line is copied, without its line feed
        }
        buf.put(i, '\n');
        ++pos_;
        return true;
    }
    std::size_t pos() const { return pos_; }

private:
    char at(std::size_t i) const { return i < b_.size() ? b_[i] : '\n'; }
    const std::string& b_;
    std::size_t pos_ = 0;
};

// ParsingUtils on a cursor into the buffer (cursor functions) or on the buffer's front (the DOM's
// wrappers erase what they pass).
std::size_t skip_spaces(const LineBuffer& b, std::size_t c) {
    while (space(b[c])) ++c;
    return c;
}
std::size_t skip_line(const LineBuffer& b, std::size_t c) {
    while (b[c] != '\r' && b[c] != '\n' && b[c] != '\0') ++c;
    while (b[c] == '\r' || b[c] == '\n') ++c;
    return c;
}
std::size_t skip_spaces_and_line_end(const LineBuffer& b, std::size_t c) {
    while (space(b[c]) || b[c] == '\r' || b[c] == '\n') ++c;
    return c;
}
bool token_match(const LineBuffer& b, std::size_t& c, const char* token) {
    const std::size_t n = std::strlen(token);
    for (std::size_t k = 0; k < n; ++k)
        if (b[c + k] != token[k]) return false;
    if (!space(b[c + n]) && !line_end(b[c + n])) return false;
    c += b[c + n] != '\0' ? n + 1 : n;
    return true;
}
bool front_spaces(LineBuffer& b) {
    const std::size_t c = skip_spaces(b, 0);
    b.erase(c);
    return !line_end(b[0]);
}
bool front_token(LineBuffer& b, const char* token) {
    std::size_t c = 0;
    if (!token_match(b, c, token)) return false;
    b.erase(c);
    return true;
}
std::uint32_t strtoul10(const LineBuffer& b, std::size_t& c) {
    std::uint32_t v = 0;
    for (; b[c] >= '0' && b[c] <= '9'; ++c) v = v * 10 + static_cast<std::uint32_t>(b[c] - '0');
    return v;
}

// strtoul10_64 from the cursor: false when it throws (no digit); on overflow it takes nothing.
bool strtoul10_64(const LineBuffer& b, std::size_t& c, std::size_t max_digits = 0) {
    if (b[c] < '0' || b[c] > '9') return false;
    std::uint64_t v = 0;
    std::size_t k = c, digits = 0;
    for (; b[k] >= '0' && b[k] <= '9'; ++k) {
        const std::uint64_t next = v * 10 + static_cast<std::uint64_t>(b[k] - '0');
        if (next < v) return true;  // overflow: the cursor stays
        v = next;
        if (max_digits != 0 && ++digits == max_digits) {
            while (b[k + 1] >= '0' && b[k + 1] <= '9') ++k;
            break;
        }
    }
    c = k + (max_digits != 0 && digits == max_digits ? 1 : 0);
    return true;
}

bool lower_is(const LineBuffer& b, std::size_t c, const char* word) {
    for (std::size_t k = 0; word[k] != '\0'; ++k)
        if (std::tolower(static_cast<unsigned char>(b[c + k])) != word[k]) return false;
    return true;
}

// PropertyInstance::ParseValue's cursor: false when Assimp throws (a number that does not start
// with a digit, or an exponent without one), which ends the import.
bool skip_value(const LineBuffer& b, std::size_t& c, int type) {
    if (type < 40) {
        if (type < 0 && (b[c] == '-' || b[c] == '+')) ++c;
        strtoul10(b, c);
        return true;
    }
    if (b[c] == '-' || b[c] == '+') ++c;
    if (lower_is(b, c, "nan")) return c += 3, true;
    if (lower_is(b, c, "inf")) {
        c += 3;
        if (lower_is(b, c, "inity")) c += 5;
        return true;
    }
    const auto decimal = [&](std::size_t k) { return (b[k] == '.' || b[k] == ',') && b[k + 1] >= '0' && b[k + 1] <= '9'; };
    if (!(b[c] >= '0' && b[c] <= '9') && !decimal(c)) return false;
    if (b[c] != '.' && b[c] != ',' && !strtoul10_64(b, c)) return false;
    if (decimal(c)) {
        ++c;
        if (!strtoul10_64(b, c, 15)) return false;
    } else if (b[c] == '.') {
        ++c;
    }
    if (b[c] == 'e' || b[c] == 'E') {
        ++c;
        if (b[c] == '-' || b[c] == '+') ++c;
        if (!strtoul10_64(b, c)) return false;
    }
    return true;
}

// Data types: 0 invalid; otherwise the size in bytes, negative for the signed integers.
int data_type(LineBuffer& b) {
    static const std::pair<const char*, int> types[] = {
        {"char", -1}, {"int8", -1}, {"uchar", 1}, {"uint8", 1}, {"short", -2}, {"int16", -2}, {"ushort", 2}, {"uint16", 2},
        {"int32", -4}, {"int", -4}, {"uint32", 4}, {"uint", 4}, {"float", 40}, {"float32", 40}, {"double64", 80}, {"double", 80},
        {"float64", 80}};
    for (const auto& [name, type] : types)
        if (front_token(b, name)) return type;
    return 0;
}
std::size_t type_size(int type) { return static_cast<std::size_t>(type >= 40 ? type / 10 : std::abs(type)); }

struct Property {
    bool list = false;
    int first = 0, type = 0;
};
struct Element {
    int semantic = 0;  // 0 unknown, 1 vertex, 2 face, 3 tristrips, 4 edge, 5 material, 6 TextureFile
    std::uint32_t count = 0;
    std::vector<Property> properties;
};

// DOM::SkipComments: a "comment" line is passed over unless a TextureFile follows its keyword.
// Followed on the buffer with a cursor (Assimp works on a copy it keeps only when it skips).
void skip_comments(LineBuffer& b) {
    std::size_t c = skip_spaces(b, 0);
    if (line_end(b[c]) || !token_match(b, c, "comment")) return;
    c = skip_spaces(b, c);
    if (line_end(b[c])) c = skip_line(b, c);
    std::size_t texture = c;
    if (!token_match(b, texture, "TextureFile")) b.erase(skip_line(b, c));
}

bool parse_property(LineBuffer& b, Property& p) {
    if (!front_spaces(b) || !front_token(b, "property") || !front_spaces(b)) return false;
    if (front_token(b, "list")) {
        p.list = true;
        if ((p.first = data_type(b)) == 0) return b.erase(skip_line(b, 0)), false;
        if (!front_spaces(b)) return false;
    }
    if ((p.type = data_type(b)) == 0) return b.erase(skip_line(b, 0)), false;
    if (!front_spaces(b)) return false;
    static const char* semantics[] = {"red", "green", "blue", "alpha", "vertex_index", "vertex_indices", "texcoord",
                                      "material_index", "ambient_red", "ambient_green", "ambient_blue", "ambient_alpha",
                                      "diffuse_red", "diffuse_green", "diffuse_blue", "diffuse_alpha", "specular_red",
                                      "specular_green", "specular_blue", "specular_alpha", "opacity", "specular_power",
                                      "r", "g", "b", "u", "s", "tx", "texture_u", "v", "t", "ty", "texture_v", "x", "y",
                                      "z", "nx", "ny", "nz"};
    bool known = false;
    for (const char* s : semantics)
        if ((known = front_token(b, s))) break;
    if (!known) b.erase(skip_line(b, 0));
    b.erase(skip_spaces_and_line_end(b, 0));
    return true;
}

bool parse_element(AssimpPly& in, LineBuffer& b, Element& e) {
    if (!front_spaces(b) || (!front_token(b, "element") && !front_token(b, "comment")) || !front_spaces(b)) return false;
    static const char* semantics[] = {"vertex", "face", "tristrips", "edge", "material", "TextureFile"};
    for (int k = 0; k < 6 && e.semantic == 0; ++k)
        if (front_token(b, semantics[k])) e.semantic = k + 1;
    if (!front_spaces(b)) return false;
    if (e.semantic == 6) {
        b.erase(skip_spaces_and_line_end(b, 0));
        return true;
    }
    std::size_t c = 0;
    e.count = strtoul10(b, c);
    b.erase(skip_spaces_and_line_end(b, 0));
    // The properties end at the first line that is not one (a file that ends leaves the buffer
    // as it is: the same bytes are parsed again, a little further each time).
    for (std::size_t guard = 0; guard < 1'000'000; ++guard) {
        in.next_line(b);
        skip_comments(b);
        Property p;
        if (!parse_property(b, p)) break;
        e.properties.push_back(p);
    }
    return true;
}

std::string line_text(std::size_t number) { return "line " + std::to_string(number) + " of the PLY data"; }

}  // namespace

std::string ply_assimp_overrun(const std::string& bytes) {
    AssimpPly in(bytes);
    LineBuffer b;
    if (!in.next_line(b)) return {};
    LineBuffer format;
    in.next_line(format);
    std::size_t c = skip_spaces_and_line_end(format, 0);
    if (!token_match(format, c, "format")) return {};
    bool ascii = token_match(format, c, "ascii"), big = false;
    if (!ascii) {
        for (std::size_t k = 0; k < 7; ++k)
            if (format[c + k] != "binary_"[k]) return {};
        big = format[c + 7] == 'b' || format[c + 7] == 'B';
    }
    // The header (DOM::ParseHeader).
    std::vector<Element> elements;
    in.next_line(b);
    for (std::size_t guard = 0;; ++guard) {
        if (guard > bytes.size() + 16) return "the PLY header never ends where Assimp reads it (corrupt)";
        skip_comments(b);
        Element e;
        if (parse_element(in, b, e)) {
            elements.push_back(std::move(e));
            continue;
        }
        if (front_token(b, "end_header")) break;
        if (!in.next_line(b)) return "the PLY header never ends where Assimp reads it (corrupt)";
    }
    for (const Element& e : elements)
        if (e.count > bytes.size())
            return "the PLY header declares " + std::to_string(e.count) + " instances of an element in a file of " +
                   std::to_string(bytes.size()) + " bytes (corrupt)";
    if (!ascii) {
        // DOM::ParseInstanceBinary: the data start after the header's line (a line feed there skipped).
        std::size_t at = in.pos();
        if (at < bytes.size() && bytes[at] == '\n') ++at;
        const auto value = [&](int type, std::uint32_t& out) {
            const std::size_t n = type_size(type);
            if (at + n > bytes.size()) return false;
            std::uint64_t v = 0;
            for (std::size_t k = 0; k < n; ++k) {
                const auto byte = static_cast<std::uint8_t>(bytes[at + (big ? k : n - 1 - k)]);
                v = (v << 8) | byte;
            }
            at += n;
            if (type < 0 && n < 4 && (v >> (8 * n - 1)) != 0) v |= ~std::uint64_t{0} << (8 * n);  // sign
            out = static_cast<std::uint32_t>(v);
            return true;
        };
        for (std::size_t ei = 0; ei < elements.size(); ++ei) {
            const Element& e = elements[ei];
            if (e.properties.empty()) continue;
            for (std::uint32_t i = 0; i < e.count; ++i)
                for (const Property& p : e.properties) {
                    std::uint32_t n = 1;
                    if (p.list) {
                        if (p.first >= 40) return "a PLY list counted by a floating-point number (corrupt)";
                        if (!value(p.first, n)) return "the binary PLY data end before its elements do (truncated)";
                    }
                    const std::uint64_t need = std::uint64_t{n} * type_size(p.type);
                    if (p.list && need > bytes.size() - at)
                        return "instance " + std::to_string(i) + " of element " + std::to_string(ei) +
                               " of the binary PLY data gives a list of " + std::to_string(n) + " values (" +
                               std::to_string(need) + " bytes) where " + std::to_string(bytes.size() - at) +
                               " bytes are left (truncated or corrupt)";
                    if (need > bytes.size() - at) return "the binary PLY data end before its elements do (truncated)";
                    at += static_cast<std::size_t>(need);
                }
        }
        return {};
    }
    // DOM::ParseInstance and ParseElementInstanceLists: one line per element instance.
    in.next_line(b);
    std::size_t number = 1;
    for (const Element& e : elements) {
        if (e.semantic == 0 || e.properties.empty()) {
            for (std::uint32_t i = 0; i < e.count; ++i, ++number) {
                skip_comments(b);
                b.erase(skip_line(b, 0));
                if (!in.next_line(b) && i + 1 < e.count) return line_text(number) + " is the last, before the elements end (truncated)";
            }
            continue;
        }
        for (std::uint32_t i = 0; i < e.count; ++i, ++number) {
            std::size_t cur = 0;
            for (const Property& p : e.properties) {
                if (line_end(b[cur = skip_spaces(b, cur)])) continue;  // the value left at its default
                if (p.list) {
                    if (p.first >= 40) return "a PLY list counted by a floating-point number (corrupt)";
                    std::uint32_t n = 0;
                    if (p.first < 0) {
                        const bool minus = b[cur] == '-';
                        if (minus || b[cur] == '+') ++cur;
                        n = strtoul10(b, cur);
                        if (minus) n = 0u - n;
                    } else {
                        n = strtoul10(b, cur);
                    }
                    std::size_t values = 0;  // what the line (or what the parser reads as its rest) holds
                    for (std::size_t k = cur; !line_end(b[k = skip_spaces(b, k)]); ++values)
                        while (!space(b[k]) && !line_end(b[k])) ++k;
                    if (n > values)
                        return line_text(number) + " gives a list of " + std::to_string(n) + " values where the line holds " +
                               std::to_string(values) + " (corrupt)";
                    bool ended = false;  // a list short of its values ends the element's reading
                    for (std::uint32_t k = 0; k < n && !ended; ++k)
                        if (!(ended = line_end(b[cur = skip_spaces(b, cur)])) && !skip_value(b, cur, p.type)) return {};
                    if (ended) continue;
                } else if (!skip_value(b, cur, p.type)) {
                    return {};
                }
                cur = skip_spaces_and_line_end(b, cur);
            }
            if (!in.next_line(b) && i + 1 < e.count) return line_text(number) + " is the last, before the elements end (truncated)";
        }
    }
    return {};
}

}  // namespace hp
