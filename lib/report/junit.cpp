#include "report/junit.hpp"

#include <cstdio>

#include "core/atomic_file.hpp"

namespace hp::junit {

namespace {

// The length of the valid UTF-8 sequence at s[i] (1-4) that XML allows, or 0.
std::size_t xml_char_length(std::string_view s, std::size_t i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') && c != 0x7f ? 1 : 0;
    std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    unsigned cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
    return n;
}

std::string number(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", seconds < 0 ? 0.0 : seconds);
    return buf;
}

struct Counts {
    std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
    void add(const Case& c) {
        ++tests;
        failures += c.outcome == Outcome::failed;
        errors += c.outcome == Outcome::error;
        skipped += c.outcome == Outcome::skipped;
    }
    void add(const Counts& c) {
        tests += c.tests;
        failures += c.failures;
        errors += c.errors;
        skipped += c.skipped;
    }
    std::string attributes() const {
        return " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
               std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) + "\"";
    }
};

std::string attr(std::string_view name, std::string_view value) {
    return " " + std::string(name) + "=\"" + escape(value, true) + "\"";
}

}  // namespace

std::string escape(std::string_view text, bool attribute) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = xml_char_length(text, i);
        if (n == 0) {
            out += '?';
            ++i;
            continue;
        }
        if (n > 1) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        const char c = text[i++];
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += attribute ? "&quot;" : "\""; break;
        case '\'': out += attribute ? "&apos;" : "'"; break;
        case '\n': out += attribute ? "&#10;" : "\n"; break;
        case '\r': out += "&#13;"; break;
        case '\t': out += attribute ? "&#9;" : "\t"; break;
        default: out += c;
        }
    }
    return out;
}

std::string to_xml(const Report& report) {
    Counts all;
    double seconds = 0;
    std::string body;
    for (const Suite& s : report.suites) {
        Counts counts;
        for (const Case& c : s.cases) counts.add(c);
        all.add(counts);
        seconds += s.seconds;
        body += "  <testsuite" + attr("name", s.name) + counts.attributes() + " time=\"" + number(s.seconds) + "\">\n";
        if (!s.properties.empty()) {
            body += "    <properties>\n";
            for (const auto& [k, v] : s.properties) body += "      <property" + attr("name", k) + attr("value", v) + "/>\n";
            body += "    </properties>\n";
        }
        for (const Case& c : s.cases) {
            body += "    <testcase" + attr("name", c.name) + attr("classname", c.classname) + " time=\"" + number(c.seconds) + "\"";
            std::string inner;
            switch (c.outcome) {
            case Outcome::passed: break;
            case Outcome::failed:
            case Outcome::error: {
                const char* tag = c.outcome == Outcome::failed ? "failure" : "error";
                inner += "      <" + std::string(tag) + attr("message", c.message) + attr("type", c.type);
                inner += c.details.empty() ? "/>\n" : ">" + escape(c.details, false) + "</" + tag + ">\n";
                break;
            }
            case Outcome::skipped: inner += "      <skipped" + attr("message", c.message) + "/>\n"; break;
            }
            if (!c.output.empty()) inner += "      <system-out>" + escape(c.output, false) + "</system-out>\n";
            body += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
        }
        if (!s.output.empty()) body += "    <system-out>" + escape(s.output, false) + "</system-out>\n";
        if (!s.errors.empty()) body += "    <system-err>" + escape(s.errors, false) + "</system-err>\n";
        body += "  </testsuite>\n";
    }
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", report.name) + all.attributes() +
           " time=\"" + number(seconds) + "\">\n" + body + "</testsuites>\n";
}

void write(const std::filesystem::path& path, const Report& report) { write_file_atomically(path, to_xml(report)); }

}  // namespace hp::junit
