// haptic-dump on pointshell files: count, nearest-neighbour spacing, bounds, normals, on top of
// the container summary (kind, version, sections, provenance) of describe_container.
#include <cstdio>
#include <set>
#include <sstream>

#include "core/text.hpp"
#include "formats/shell.hpp"
#include "inspect/inspect.hpp"
#include "pointshell/pointshell.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

void describe_shell(const fs::path& path, Summary& s) {
    const ShellFile f = read_shell_file(path);  // validates counts, finite points, unit normals
    const Pointshell& sh = f.shell;
    Aabb box;
    for (const Vec3d& p : sh.points) box.extend(p);
    const SpacingStats sp = nearest_neighbour_spacing(sh.points);
    const std::size_t triangles = std::set<std::uint32_t>(sh.triangles.begin(), sh.triangles.end()).size();
    const nlohmann::json& meta = f.metadata;
    const double voxel = meta.contains("grid") && meta["grid"].is_object() ? meta["grid"].value("voxel_size", 0.0) : 0.0;
    const std::string source = meta.contains("normal_source") && meta["normal_source"].is_string()
                                   ? meta["normal_source"].get<std::string>() : "";

    std::ostringstream o;
    char buf[512];
    o << "points       " << with_commas(sh.points.size()) << " on " << with_commas(triangles) << " triangles\n";
    std::snprintf(buf, sizeof buf, "bounds       [%.6g, %.6g, %.6g] .. [%.6g, %.6g, %.6g]\n", box.min.x, box.min.y,
                  box.min.z, box.max.x, box.max.y, box.max.z);
    o << buf;
    std::snprintf(buf, sizeof buf, "spacing      nearest neighbour min %.4g, median %.4g, max %.4g", sp.min, sp.median, sp.max);
    o << buf;
    if (voxel > 0) {
        std::snprintf(buf, sizeof buf, " (voxel size %.4g)", voxel);
        o << buf;
    }
    o << "\nnormals      unit, inward" << (source.empty() ? "" : " (" + source + ")") << "\n";
    s.text += o.str();
    s.json["points"] = sh.points.size();
    s.json["triangles"] = triangles;
    s.json["bounds"] = {{"min", {box.min.x, box.min.y, box.min.z}}, {"max", {box.max.x, box.max.y, box.max.z}}};
    s.json["spacing"] = {{"min", sp.min}, {"median", sp.median}, {"max", sp.max}};
    s.json["normals"] = {{"unit", true}, {"inward", true}, {"source", source}};
}

}  // namespace hp::inspect
