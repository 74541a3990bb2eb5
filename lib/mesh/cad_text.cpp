// lib/mesh/cad_text (cad_text.hpp).
#include "mesh/cad_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace hp {

namespace {

// Whether `word` (upper case) is at `at` of bytes [.., end), in any case: the lexer's (?i:...).
bool keyword_at(const std::string& bytes, std::size_t at, std::size_t end, std::string_view word) {
    if (at + word.size() > end) return false;
    for (std::size_t i = 0; i < word.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(bytes[at + i])) != word[i]) return false;
    return true;
}

// The stretches of a STEP file that OpenCASCADE 7.6's lexer (StepFile's step.lex) reads as tokens,
// in order: code(begin, end) for each. Left out:
// - strings: a quote opens one, and it ends at the next quote that is followed, after any spaces,
//   double quotes, CRs and LFs, by ',' or ')' (its trailing context; a doubled quote is read by the
//   same rule). A string the file's end cuts short runs to the end.
// - "/* ... */" comments (a quote inside one opens nothing);
// - all after END-ISO...; (any case), where the lexer stops reading.
// One pass: each byte is looked at by at most two of the rules.
template <class Code>
void for_each_step_code(const std::string& bytes, Code code) {
    const std::size_t n = bytes.size();
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::size_t start = 0;
    for (std::size_t i = 0; i < n;) {
        const char c = bytes[i];
        if (c == '\'') {
            code(start, i);
            std::size_t q = i;
            for (;;) {
                q = bytes.find('\'', q + 1);
                if (q == std::string::npos) return;  // the rest is the string
                std::size_t k = q + 1;
                while (k < n && (bytes[k] == ' ' || bytes[k] == '"' || bytes[k] == '\r' || bytes[k] == '\n')) ++k;
                if (k < n && (bytes[k] == ',' || bytes[k] == ')')) break;
            }
            i = start = q + 1;
        } else if (c == '/' && i + 1 < n && bytes[i + 1] == '*') {
            code(start, i);
            const std::size_t close = bytes.find("*/", i + 2);
            i = start = close == std::string::npos ? n : close + 2;
        } else if ((i == 0 || !word(bytes[i - 1])) && keyword_at(bytes, i, n, "END-ISO")) {
            std::size_t k = i + 7;
            while (k < n && (std::isdigit(static_cast<unsigned char>(bytes[k])) || bytes[k] == '-')) ++k;
            if (k < n && bytes[k] == ';') {
                code(start, i);
                return;
            }
            i = k;
        } else {
            ++i;
        }
    }
    code(start, n);
}

}  // namespace

// Real numbers of the file beyond a double's range: refused. OpenCASCADE reads `1.E+30810` as
// infinity, and its shape healing then ran for minutes on a STEP point with that coordinate, or
// forever on an edge of a line through such a point (its range made NaN; tests/fuzz/regressions/step).
// A number has a mantissa and an exponent (E, or D in IGES). STEP: what OpenCASCADE's lexer reads as
// tokens (for_each_step_code). IGES: the data of the global and parameter sections only (the
// directory's columns 65 to 80 read as numbers, "00010000D0000401"), Hollerith strings not skipped
// (a string holding such a number is refused too).
void check_cad_numbers(const std::string& where, const std::string& format, const std::string& bytes) {
    const auto scan = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i) {
            const char c = bytes[i];
            if ((c != 'E' && c != 'e' && c != 'D' && c != 'd') || i == from ||
                !(std::isdigit(static_cast<unsigned char>(bytes[i - 1])) || bytes[i - 1] == '.'))
                continue;
            std::size_t begin = i;
            while (begin > from && (std::isdigit(static_cast<unsigned char>(bytes[begin - 1])) || bytes[begin - 1] == '.')) --begin;
            if (begin > from && (std::isalpha(static_cast<unsigned char>(bytes[begin - 1])) || bytes[begin - 1] == '_')) continue;
            std::size_t end = i + 1;
            if (end < to && (bytes[end] == '+' || bytes[end] == '-')) ++end;
            while (end < to && std::isdigit(static_cast<unsigned char>(bytes[end]))) ++end;
            std::string number = bytes.substr(begin, end - begin);
            number[i - begin] = 'E';
            if (!std::isfinite(std::strtod(number.c_str(), nullptr)))
                fail_input(where, "the " + format + " number " + number.substr(0, 40) + " at byte " + std::to_string(begin) +
                                      " is beyond the range of a double (damaged file; check or export it again)");
        }
    };
    if (format == "STEP") return for_each_step_code(bytes, scan);
    for (std::size_t line = 0; line < bytes.size();) {  // IGES: 80-column records, section letter in column 73
        std::size_t eol = bytes.find_first_of("\r\n", line);
        if (eol == std::string::npos) eol = bytes.size();
        if (eol - line >= 73 && (bytes[line + 72] == 'G' || bytes[line + 72] == 'P'))
            scan(line, line + (bytes[line + 72] == 'P' ? 64 : 72));
        line = eol + 1;
    }
}

// A STEP entity number defined twice, or an entity that refers to itself, directly or through
// others: refused. Entity numbers are unique outside &SCOPE blocks (OpenCASCADE's reader reports
// "Ident defined SEVERAL TIMES" as a failure, then resolves references to such a number by position
// in a second pass, where a process that had read many mutated files stalled). The instances of a
// STEP file form an acyclic graph; OpenCASCADE follows references without a guard, and a
// GEOMETRIC_CURVE_SET listing itself kept its shape healing recursing for more than ten minutes on a
// 1.6 KB file (tests/fuzz/regressions/step). The records are read as OpenCASCADE's lexer reads them
// (for_each_step_code): "#id" followed by blanks and '=' opens a record, ';' ends it, other "#id"
// are references. Then a depth-first walk. In a file with &SCOPE, a number defined twice counts as
// one entity with the references of both.
void check_step_references(const std::string& where, const std::string& bytes) {
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    std::vector<std::uint64_t> ids;
    std::vector<std::vector<std::uint64_t>> refs;
    std::int64_t current = -1;
    std::optional<std::uint64_t> twice;  // the first entity number defined again
    bool scoped = false;                 // &SCOPE seen
    const auto records = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to;) {
            const char c = bytes[i];
            if (c == ';') {
                current = -1;
                ++i;
            } else if (c == '#' && i + 1 < to && std::isdigit(static_cast<unsigned char>(bytes[i + 1]))) {
                ++i;
                std::uint64_t id = 0;
                for (; i < to && std::isdigit(static_cast<unsigned char>(bytes[i])); ++i) id = id * 10 + static_cast<std::uint64_t>(bytes[i] - '0');
                std::size_t after = i;
                while (after < to && (bytes[after] == ' ' || bytes[after] == '\t')) ++after;
                if (after < to && bytes[after] == '=') {
                    const auto [at, fresh] = index.try_emplace(id, static_cast<std::uint32_t>(ids.size()));
                    if (fresh) {
                        ids.push_back(id);
                        refs.emplace_back();
                    } else if (!twice) {
                        twice = id;
                    }
                    current = at->second;
                    i = after + 1;
                } else if (current >= 0) {
                    refs[static_cast<std::size_t>(current)].push_back(id);
                }
            } else {
                if (c == '&' && keyword_at(bytes, i + 1, to, "SCOPE")) scoped = true;
                ++i;
            }
        }
    };
    for_each_step_code(bytes, records);
    if (twice && !scoped)
        fail_input(where, "STEP entity #" + std::to_string(*twice) +
                              " is defined twice (entity numbers must be unique; damaged file, check or export it again)");
    // Depth-first, without recursion: 0 unseen, 1 on the path, 2 done.
    std::vector<std::uint8_t> state(ids.size(), 0);
    std::vector<std::pair<std::uint32_t, std::size_t>> path;
    for (std::uint32_t root = 0; root < ids.size(); ++root) {
        if (state[root] != 0) continue;
        state[root] = 1;
        path.emplace_back(root, 0);
        while (!path.empty()) {
            auto& [node, next] = path.back();
            if (next == refs[node].size()) {
                state[node] = 2;
                path.pop_back();
                continue;
            }
            const auto found = index.find(refs[node][next++]);
            if (found == index.end()) continue;  // a reference to no entity: OpenCASCADE reports it
            const std::uint32_t to = found->second;
            if (state[to] == 1)
                fail_input(where, "STEP entity #" + std::to_string(ids[to]) + " refers to itself" +
                                      (to == node ? std::string() : " through #" + std::to_string(ids[node])) +
                                      " (a cycle of references; damaged file, check or export it again)");
            if (state[to] == 0) {
                state[to] = 1;
                path.emplace_back(to, 0);
            }
        }
    }
}

}  // namespace hp
