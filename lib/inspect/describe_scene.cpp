// haptic-dump of scene.json (scene/scene_file.hpp): what the scene holds, and --check of its files.
#include <cstdio>
#include <sstream>
#include <system_error>

#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "core/text.hpp"
#include "inspect/check.hpp"
#include "inspect/inspect.hpp"
#include "scene/scene_file.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary describe_scene(const fs::path& path) {
    const scene::Scene s = scene::read_scene(path);
    std::size_t failed = 0;
    for (const auto& g : s.geometries) failed += !g.ok;
    std::ostringstream o;
    char buf[512];
    o << "file         " << path.string() << "\nkind         scene\n";
    o << "source       " << s.source_file << " (hash " << s.source_hash << ")\n";
    o << "units        " << s.units << "\n";
    std::snprintf(buf, sizeof buf, "voxel size   %.6g\n", s.voxel_size);
    o << buf;
    o << "pipeline     " << s.pipeline_name << " (parameters " << s.params_hash << ")\n";
    o << "parts        " << s.parts.size() << " of " << s.geometries.size() << " geometr"
      << (s.geometries.size() == 1 ? "y" : "ies") << (failed ? ", " + std::to_string(failed) + " failed" : std::string()) << "\n";
    for (const auto& g : s.geometries) {
        o << "  " << g.id << "  " << g.first_part << ": " << g.instances << " instance" << (g.instances == 1 ? "" : "s") << ", "
          << with_commas(g.triangles) << " triangles";
        if (!g.baked.empty()) o << ", baked " << g.baked;
        if (!g.ok) o << ", FAILED: " << g.error;
        else {
            o << "; files";
            for (const auto& [kind, f] : g.files) o << " " << kind;
        }
        o << "\n";
    }
    for (const auto& p : s.parts) {
        const auto& t = p.placement.position;
        const auto& q = p.placement.quaternion;
        std::snprintf(buf, sizeof buf, "  %-24s %s  position [%.6g, %.6g, %.6g]  quaternion [%.6g, %.6g, %.6g, %.6g]\n",
                      p.name.c_str(), s.geometries[p.geometry].id.c_str(), t.x, t.y, t.z, q[0], q[1], q[2], q[3]);
        o << buf;
    }
    for (const auto& n : s.notes) o << "note         " << n << "\n";
    Summary out;
    out.text = o.str();
    out.json = scene::to_json(s);
    out.json["file"] = path.string();
    out.json["kind"] = "scene";
    return out;
}

void check_scene(const fs::path& path, CheckReport& r) {
    const scene::Scene s = scene::read_scene(path);  // every key, or bad_input
    r.kind = "scene";
    r.pass("every key of scene.json: " + std::to_string(s.parts.size()) + " parts, " + std::to_string(s.geometries.size()) +
           " geometries");
    for (std::size_t g = 0; g < s.geometries.size(); ++g) {
        const scene::SceneGeometry& geometry = s.geometries[g];
        std::string part = geometry.first_part;
        if (!geometry.ok) {
            r.problem("part '" + part + "': geometry " + geometry.id + " was not prepared: " + geometry.error);
            continue;
        }
        for (const auto& [kind, ref] : geometry.files) {
            const fs::path file = path.parent_path() / ref.file;
            std::error_code ec;
            if (!fs::is_regular_file(file, ec)) {
                r.problem("part '" + part + "': " + file.string() + " (" + kind + ") is missing");
                continue;
            }
            if (fs::file_size(file, ec) != ref.bytes || !hash_matches(file, ref.hash)) {
                r.problem("part '" + part + "': " + file.string() + " (" + kind + ") changed since the scene was prepared");
                continue;
            }
            r.pass(geometry.id + " " + kind + ": " + ref.file + " present, size and hash as recorded");
        }
    }
}

}  // namespace hp::inspect
