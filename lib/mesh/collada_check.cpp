// lib/mesh/collada_check: the checks of a COLLADA file's bytes before Assimp reads them
// (collada_check.hpp).
#include "mesh/collada_check.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/error.hpp"

namespace hp {

namespace {

// A count read from a file, for a message: a double beyond long long's range (or inf) is not cast.
std::string count_text(double declared) {
    return declared < 1e18 ? std::to_string(static_cast<long long>(declared)) : "more than 10^18";
}

// Where the element opened at `at` (by "<name") ends: its closing tag, or its own end for an
// element closed by "/>"; npos for a tag that only starts so ("<name" followed by more letters).
std::size_t element_end(const std::string& bytes, std::size_t at, const std::string& name) {
    const std::size_t after = at + 1 + name.size();
    if (after >= bytes.size() || (bytes[after] != '>' && bytes[after] != '/' && !std::isspace(static_cast<unsigned char>(bytes[after]))))
        return std::string::npos;
    const std::size_t head_end = bytes.find('>', at);
    if (head_end == std::string::npos) return bytes.size();
    if (bytes[head_end - 1] == '/') return head_end;
    return std::min(bytes.find("</" + name + ">", head_end), bytes.size());
}

// An attribute `name` of value `value` (either quote) in bytes [begin, end).
bool has_attribute(const std::string& bytes, std::size_t begin, std::size_t end, const std::string& name,
                   const std::string& value) {
    for (const char quote : {'"', '\''}) {
        const std::string text = name + "=" + quote + value + quote;
        for (std::size_t at = bytes.find(text, begin); at < end; at = bytes.find(text, at + 1))
            if (at + text.size() <= end && std::isspace(static_cast<unsigned char>(bytes[at - 1]))) return true;
    }
    return false;
}

// The value of attribute `name` (either quote) of the tag in bytes [begin, end); empty when absent.
std::string attribute(const std::string& bytes, std::size_t begin, std::size_t end, const std::string& name) {
    for (std::size_t at = bytes.find(name + "=", begin); at < end; at = bytes.find(name + "=", at + 1)) {
        const std::size_t quote = at + name.size() + 1;
        if (!std::isspace(static_cast<unsigned char>(bytes[at - 1])) || quote >= end || (bytes[quote] != '"' && bytes[quote] != '\'')) continue;
        const std::size_t close = bytes.find(bytes[quote], quote + 1);
        return close < end ? bytes.substr(quote + 1, close - quote - 1) : std::string();
    }
    return {};
}

// An accessor reads `count` elements of `stride` values from `offset` in the array its source names,
// which Assimp does without checking the array's own count: a float_array of count "*192" (read as
// 0, so no values) read by an accessor of 64 made it follow a null pointer (SIGSEGV,
// tests/fuzz/regressions/mesh_dae). Each accessor's last element (its params) must lie within its array.
void check_accessors(const std::string& bytes, const std::string& where) {
    std::map<std::string, double> arrays;  // array id -> count
    for (const std::string tag : {"float_array", "int_array", "Name_array", "IDREF_array", "bool_array", "SIDREF_array"})
        for (std::size_t at = bytes.find("<" + tag); at != std::string::npos; at = bytes.find("<" + tag, at + 1)) {
            const std::size_t head_end = std::min(bytes.find('>', at), bytes.size());
            const std::string id = attribute(bytes, at, head_end, "id");
            if (!id.empty()) arrays[id] = std::strtod(attribute(bytes, at, head_end, "count").c_str(), nullptr);
        }
    for (std::size_t at = bytes.find("<accessor"); at != std::string::npos; at = bytes.find("<accessor", at + 1)) {
        const std::size_t end = element_end(bytes, at, "accessor");
        if (end == std::string::npos) continue;
        const std::size_t head_end = std::min(bytes.find('>', at), end);
        const auto number = [&](const char* name, double otherwise) {
            const std::string text = attribute(bytes, at, head_end, name);
            return text.empty() ? otherwise : std::strtod(text.c_str(), nullptr);
        };
        const double count = number("count", 0), offset = number("offset", 0), stride = number("stride", 1);
        std::string source = attribute(bytes, at, head_end, "source");
        if (!source.empty() && source[0] == '#') source.erase(0, 1);
        const auto array = arrays.find(source);
        if (!(count > 0) || array == arrays.end()) continue;  // nothing read, or a source Assimp does not resolve (it refuses)
        double params = 0;
        for (std::size_t p = bytes.find("<param", head_end); p < end; p = bytes.find("<param", p + 1)) ++params;
        const double last = offset + (count - 1) * stride + std::max(params, 1.0);
        if (!(last <= array->second))
            fail_input(where, "the COLLADA <accessor> at byte " + std::to_string(at) + " reads " + count_text(last) +
                                  " values of the array '" + source.substr(0, 80) + "', which has " + count_text(array->second) + " (corrupt)");
    }
}

// The schema requires an input of semantic POSITION in every <vertices>, and a polylist gives each
// polygon's size in its <vcount>. A 4.9 KB file whose only <vertices> input had lost its semantic and
// whose polylist of count 1 had lost its <vcount> made Assimp 5.2.5 follow a null pointer (SIGSEGV,
// tests/fuzz/regressions/mesh_dae); either alone it refused or read.
void check_vertices_and_polylists(const std::string& bytes, const std::string& where) {
    for (std::size_t at = bytes.find("<vertices"); at != std::string::npos; at = bytes.find("<vertices", at + 1)) {
        const std::size_t end = element_end(bytes, at, "vertices");
        if (end != std::string::npos && !has_attribute(bytes, at, end, "semantic", "POSITION"))
            fail_input(where, "the COLLADA <vertices> at byte " + std::to_string(at) +
                                  " has no input of semantic POSITION (corrupt)");
    }
    for (std::size_t at = bytes.find("<polylist"); at != std::string::npos; at = bytes.find("<polylist", at + 1)) {
        const std::size_t end = element_end(bytes, at, "polylist");
        if (end == std::string::npos) continue;
        const std::size_t head_end = std::min(bytes.find('>', at), end);
        const std::size_t c = bytes.find(" count=\"", at);
        const double count = c < head_end ? std::strtod(bytes.c_str() + c + 8, nullptr) : 0;
        bool vcount = false;
        for (std::size_t v = bytes.find("<vcount", head_end); v < end && !vcount; v = bytes.find("<vcount", v + 1))
            vcount = element_end(bytes, v, "vcount") != std::string::npos;
        if (count > 0 && !vcount)
            fail_input(where, "the COLLADA <polylist> at byte " + std::to_string(at) + " has a count of " +
                                  count_text(count) + " but no <vcount> (corrupt)");
    }
}

}  // namespace

// COLLADA: Assimp reads an integer list (<p>, <vcount>, <v>) number by number without moving past
// a character that is not part of a number: one letter in a <p> list made it append zeros until
// memory ran out (17 GB and 147 s for a 4.8 KB file, tests/fuzz/regressions/mesh_dae). It also
// reserves an array's declared count before reading it. So the lists hold only integers and
// whitespace, and no count is larger than the file's bytes (every element takes at least one).
void check_collada(const std::string& bytes, const std::string& where) {
    for (const char* tag : {"<p>", "<vcount>", "<v>"}) {
        for (std::size_t at = bytes.find(tag); at != std::string::npos; at = bytes.find(tag, at + 1)) {
            const std::size_t begin = at + std::strlen(tag), end = bytes.find('<', begin);
            const std::size_t bad = bytes.find_first_not_of("0123456789-+ \t\r\n", begin);
            if (bad < std::min(end, bytes.size()))
                fail_input(where, std::string("the COLLADA list ") + tag + " at byte " + std::to_string(at) +
                                      " holds '" + bytes[bad] + "', not an integer (corrupt)");
        }
    }
    // The arrays' count attribute is required by the schema; Assimp follows a null pointer without
    // it (a float_array whose count was renamed, tests/fuzz/regressions/mesh_dae).
    for (const char* tag : {"<float_array", "<int_array", "<Name_array", "<IDREF_array", "<bool_array", "<SIDREF_array"}) {
        for (std::size_t at = bytes.find(tag); at != std::string::npos; at = bytes.find(tag, at + 1)) {
            const std::string element = bytes.substr(at, bytes.find('>', at) - at);
            bool counted = false;
            for (std::size_t c = element.find("count=\""); c != std::string::npos && !counted; c = element.find("count=\"", c + 1))
                counted = std::isspace(static_cast<unsigned char>(element[c - 1])) != 0;
            if (!counted)
                fail_input(where, std::string("the COLLADA array ") + (tag + 1) + " at byte " + std::to_string(at) +
                                      " has no count attribute (corrupt)");
        }
    }
    // Triangles and polylists: one <p> list for a non-zero count; polygons: a <p> per polygon.
    // Assimp aborts on an assertion otherwise (a polylist without its <p>).
    for (const std::string name : {"triangles", "polylist", "polygons"}) {
        const std::string open = "<" + name, close = "</" + name + ">";
        for (std::size_t at = bytes.find(open); at != std::string::npos; at = bytes.find(open, at + 1)) {
            const std::size_t head_end = bytes.find('>', at);
            if (head_end == std::string::npos || !std::isspace(static_cast<unsigned char>(bytes[at + open.size()]))) continue;
            const std::string head = bytes.substr(at, head_end - at);
            const std::size_t c = head.find(" count=\"");
            const double count = c == std::string::npos ? 0 : std::strtod(head.c_str() + c + 8, nullptr);
            const std::size_t body_end = head.back() == '/' ? head_end : std::min(bytes.find(close, head_end), bytes.size());
            double lists = 0;
            for (std::size_t p = bytes.find("<p>", head_end); p < body_end; p = bytes.find("<p>", p + 1)) ++lists;
            const double expected = name == "polygons" ? count : (count > 0 ? 1 : lists);
            if (lists != expected && !(name == "polygons" && bytes.find("<ph>", head_end) < body_end))
                fail_input(where, "the COLLADA <" + name + "> at byte " + std::to_string(at) + " has " + count_text(lists) +
                                      " <p> lists for a count of " + count_text(count) + " (corrupt)");
        }
    }
    const std::string attribute = " count=\"";
    for (std::size_t at = bytes.find(attribute); at != std::string::npos; at = bytes.find(attribute, at + 1)) {
        const double declared = std::strtod(bytes.c_str() + at + attribute.size(), nullptr);
#ifdef HP_FUZZ_CANARY
        // The fuzzing canary of mesh_dae (docs/fuzzing.md): the check below against the file's bits, not its bytes.
        if (declared > static_cast<double>(bytes.size()) && declared <= 8.0 * static_cast<double>(bytes.size())) __builtin_trap();
#endif
        if (declared > static_cast<double>(bytes.size()))
            fail_input(where, "the COLLADA count at byte " + std::to_string(at) + " declares " + count_text(declared) +
                                  " elements but the file has only " +
                                  std::to_string(bytes.size()) + " bytes (truncated or corrupt)");
    }
    check_vertices_and_polylists(bytes, where);
    check_accessors(bytes, where);
}

}  // namespace hp
