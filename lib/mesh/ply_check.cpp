// lib/mesh/ply_check (ply_check.hpp).
#include "mesh/ply_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string_view>
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

// ASCII PLY data against its header's lists: Assimp reads each element from one line and
// reserves a list's values for the count the line gives before reading them (8 bytes each, the
// count read as unsigned decimal digits wrapping at 2^32): a face line whose count was
// "0000000000000000000000001639710584328" made it ask for 26.6 GB (a 646-byte file,
// tests/fuzz/regressions/mesh_ply). A list's count must not exceed the values left on its line. Returns the first such
// line (1-based, in the data), or 0.
std::size_t ply_list_overrun(const std::string& bytes, std::size_t data) {
    struct Element {
        double count = 0;
        std::vector<bool> list;  // per property: a list
    };
    std::vector<Element> elements;
    std::istringstream header(bytes.substr(0, data));
    std::string line;
    while (std::getline(header, line) && line.rfind("end_header", 0) != 0) {
        std::istringstream l(line);
        std::string kw, what;
        l >> kw >> what;
        if (kw == "element") {
            // The count as the header check takes it (Assimp's reading of it included).
            Element e;
            e.count = ply_element_count(line);
            elements.push_back(std::move(e));
        } else if (kw == "property" && !elements.empty()) {
            elements.back().list.push_back(what == "list");
        }
    }
    std::size_t at = data, number = 0;
    std::vector<std::string_view> tokens;
    for (const Element& e : elements) {
        for (double i = 0; i < e.count && at < bytes.size(); ++i) {
            const std::size_t end = std::min(bytes.find('\n', at), bytes.size());
            const std::string_view text(bytes.data() + at, end - at);
            at = end + 1;
            ++number;
            tokens.clear();
            for (std::size_t k = 0; k < text.size();) {
                k = text.find_first_not_of(" \t\r", k);
                if (k == std::string_view::npos) break;
                const std::size_t stop = std::min(text.find_first_of(" \t\r", k), text.size());
                tokens.push_back(text.substr(k, stop - k));
                k = stop;
            }
            std::size_t t = 0;
            for (const bool list : e.list) {
                if (!list) {
                    ++t;
                    continue;
                }
                std::uint32_t values = 0;
                if (t < tokens.size())
                    for (const char c : tokens[t]) {
                        if (c < '0' || c > '9') break;
                        values = values * 10 + static_cast<std::uint32_t>(c - '0');
                    }
                ++t;
                if (values > tokens.size() - std::min(t, tokens.size())) return number;
                t += values;
            }
        }
    }
    return 0;
}

}  // namespace hp
