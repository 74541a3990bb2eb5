#include <sstream>

#include "core/text.hpp"
#include "formats/container.hpp"
#include "inspect/inspect.hpp"
#include "inspect/tree.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary describe_container(const fs::path& path) {
    container::Reader r = container::Reader::open(path);
    if (r.kind() == container::Kind::cfm) return describe_cfm(path);
    if (r.kind() == container::Kind::octree) return describe_octree(path);
    Summary s;
    std::ostringstream o;
    o << "file         " << path.string() << "\n";
    o << "kind         " << container::kind_name(r.kind()) << " (format v" << r.version() << ")\n";
    o << "file size    " << human_bytes(static_cast<double>(r.file_size())) << "\n";
    nlohmann::json sections = nlohmann::json::array();
    for (const auto& sec : r.sections()) {
        o << "section      " << sec.name << ": " << sec.size << " bytes\n";
        sections.push_back({{"name", sec.name}, {"bytes", sec.size}});
    }
    for (const auto& [key, value] : r.metadata().items())
        o << "meta         " << key << " = " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
    s.text = o.str();
    s.json = {{"file", path.string()}, {"kind", container::kind_name(r.kind())}, {"format_version", r.version()},
              {"file_size", r.file_size()}, {"sections", sections}, {"metadata", r.metadata()}};
    if (r.kind() == container::Kind::pointshell || r.kind() == container::Kind::tree) describe_shell(path, s);
    if (r.kind() == container::Kind::tree) describe_tree(path, s);
    return s;
}

}  // namespace hp::inspect
