#pragma once
// lib/report/junit — JUnit XML test reports, the form CI servers read (GitLab's test reports,
// Jenkins' JUnit plugin, GitHub Actions through a JUnit reporting action):
//
//   <testsuites name tests failures errors skipped time>
//     <testsuite name tests failures errors skipped time>
//       <properties><property name value/>...</properties>
//       <testcase name classname time>
//         <failure message type>details</failure> | <error message type>...</error> | <skipped message/>
//         <system-out>...</system-out>
//       </testcase>
//       <system-out/> <system-err/>
//     </testsuite>
//   </testsuites>
//
// Times are seconds. The counts are computed from the cases. Text is escaped for XML, and bytes
// XML 1.0 does not allow (control characters, invalid UTF-8) become '?', so any message is safe.
// The layout follows the Ant JUnit task's format as documented by Jenkins and GitLab (see
// docs/ci.md); no timestamp or host name, so the same results give the same bytes.
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hp::junit {

enum class Outcome { passed, failed, error, skipped };

struct Case {
    std::string name, classname;
    double seconds = 0;
    Outcome outcome = Outcome::passed;
    std::string message;  // failed/error/skipped: one line, with the measured figure and the limit
    std::string type;     // failed/error: a short kind ("over budget", "exit 3")
    std::string details;  // failed/error: the element's text
    std::string output;   // <system-out> of the case
};

struct Suite {
    std::string name;
    double seconds = 0;
    std::vector<std::pair<std::string, std::string>> properties;
    std::vector<Case> cases;
    std::string output, errors;  // <system-out>, <system-err> of the suite (left out when empty)
};

struct Report {
    std::string name;
    std::vector<Suite> suites;
};

// The XML document (UTF-8, with the XML declaration, ending in a newline).
std::string to_xml(const Report& report);
// Writes it atomically. Throws hp::Error(cannot_write).
void write(const std::filesystem::path& path, const Report& report);

// Text for XML character data and attribute values: & < > " ' escaped, line breaks kept (as
// &#10; in attributes), anything else XML 1.0 forbids replaced by '?'.
std::string escape(std::string_view text, bool attribute);

}  // namespace hp::junit
