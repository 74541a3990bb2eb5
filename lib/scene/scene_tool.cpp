#include "scene/scene_tool.hpp"

#include <algorithm>
#include <iterator>

#include "core/error.hpp"
#include "query/timing.hpp"

namespace hp::scene {

namespace fs = std::filesystem;

void check_tool_spec(const ToolSpec& tool, const QueryOptions& options) {
    const std::string name = tool.part.empty() ? tool.tree_file.string() : "part '" + tool.part + "'";
    if (!tool.cfm) {
        if (!tool.cfm_file.empty()) fail_usage("tool " + name + ": a closest feature map file without asking for the map");
        return;
    }
    if (options.mode != QueryMode::time_critical)
        fail_usage("tool " + name + ": a closest feature map is used only by the time-critical mode");
    if (tool.part.empty() && tool.cfm_file.empty())
        fail_usage("the outside tool " + name + " has no closest feature map: give its file (haptic-cfm of that tree)");
    if (!tool.part.empty() && !tool.cfm_file.empty())
        fail_usage("tool " + name + ": a part's closest feature map is its geometry's cfm file in the scene, not another file");
}

fs::path verified_geometry_file(const fs::path& scene_path, const Scene& scene, std::size_t geometry, const std::string& kind,
                                const std::string& where, const std::string& missing) {
    const SceneGeometry& g = scene.geometries.at(geometry);
    if (!g.files.count(kind)) fail_input("", where + ": its geometry " + g.id + " has no " + kind + " file (" + missing + ")");
    // The scene with that one file, so that only it is hashed.
    Scene one = scene;
    for (std::size_t k = 0; k < one.geometries.size(); ++k) {
        auto& files = one.geometries[k].files;
        for (auto it = files.begin(); it != files.end();) it = k == geometry && it->first == kind ? std::next(it) : files.erase(it);
    }
    verify_scene_files(scene_path, one, {geometry});
    return geometry_file(scene_path, scene, geometry, kind);
}

SceneTool load_scene_tool(const fs::path& scene_path, const Scene& scene, std::optional<std::size_t> part, const ToolSpec& spec) {
    SceneTool tool;
    tool.part = part;
    const std::string where = part ? part_where(scene_path, scene.parts[*part].name) : std::string();
    if (part) {
        const ScenePart& p = scene.parts[*part];
        const SceneGeometry& geometry = scene.geometries[p.geometry];
        if (!geometry.files.count("tree"))
            fail_input("", where + ": the tool's geometry " + geometry.id +
                               " has no point-sphere tree (add the pointshell and spheretree stages to the pipeline)");
        tool.file = geometry_file(scene_path, scene, p.geometry, "tree");
        if (spec.cfm)
            tool.cfm_file = verified_geometry_file(scene_path, scene, p.geometry, "cfm", where,
                                                   "a closest feature map: add the cfm stage to the pipeline and run "
                                                   "haptic-pipeline --assembly again");
    } else {
        tool.file = spec.tree_file;
        tool.cfm_file = spec.cfm_file;
    }
    try {
        tool.data = load_moving_object(tool.file);
        if (spec.cfm) attach_cfm(tool.data, tool.cfm_file, tool.file);
    } catch (const Error& e) {
        if (!part) throw;
        throw Error(e.code(), where + ": " + e.what());
    }
    if (!tree_covers_points(tool.data.tree, tool.data.points))
        fail_input(tool.file.string(),
                   "the point-sphere tree does not hold all its points in its spheres (rebuild it with haptic-spheretree)");
    tool.center = tool.data.tree.clusters.empty() ? Vec3d{} : tool.data.tree.clusters[0].sphere.center;
    double r = 0;
    for (const Vec3d& p : tool.data.points) r = std::max(r, length(p - tool.center));
    for (const auto& c : tool.data.tree.clusters) r = std::max(r, length(c.sphere.center - tool.center) + c.sphere.radius);
    tool.radius = r * (1 + 1e-9);
    return tool;
}

}  // namespace hp::scene
