// haptic-sim's scenes of a scene.json (haptic-pipeline --assembly, lib/scene): every part a VPS
// object of its geometry's files at its placement, static but for the dynamic parts (docs/sim.md,
// "scene.json"). Instances name the same files, so run_scene loads each geometry's VPS data once.
#include <set>

#include "bullet/sim.hpp"
#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "query/session.hpp"
#include "scene/scene_file.hpp"

namespace hp::bullet {

namespace {

// The assembly the scene was prepared from, unchanged (its recorded hash): where it was given,
// beside the scene, or by its name beside the scene. Empty when none is found.
std::filesystem::path find_source(const std::filesystem::path& scene_json, const scene::Scene& s) {
    const std::filesystem::path folder = scene_json.parent_path();
    const std::filesystem::path given(s.source_file);
    std::vector<std::filesystem::path> candidates{given};
    if (given.is_relative()) candidates.push_back(folder / given);
    if (!s.source_name.empty()) candidates.push_back(folder / s.source_name);
    for (const std::filesystem::path& p : candidates) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(p, ec) && hash_file(p) == s.source_hash) return p;
    }
    return {};
}

}  // namespace

Scene scene_from_assembly(const std::filesystem::path& scene_json, const std::vector<DynamicPart>& dynamic,
                          std::vector<std::string>* notes) {
    const scene::Scene s = scene::read_scene(scene_json);
    const std::string where = scene_json.string();
    std::vector<double> mass(s.parts.size(), 0);
    for (const DynamicPart& d : dynamic) {
        const std::size_t i = s.find_part(d.name, where);
        if (!(d.mass > 0) || !std::isfinite(d.mass))
            fail_input(where, "part '" + s.parts[i].name + "': the mass must be > 0 (got " + std::to_string(d.mass) + ")");
        mass[i] = d.mass;
    }
    if (dynamic.empty()) fail_input(where, "no dynamic part: name one with --dynamic PART (every part is static by default)");
    // Every part's geometry must be prepared: a failed one cannot collide.
    std::vector<std::size_t> used;
    for (const scene::ScenePart& p : s.parts) {
        const scene::SceneGeometry& g = s.geometries.at(p.geometry);
        if (!g.ok) fail_input(where, "part '" + p.name + "': its geometry " + g.id + " failed to prepare: " + g.error);
        if (std::find(used.begin(), used.end(), p.geometry) == used.end()) used.push_back(p.geometry);
    }
    scene::verify_scene_files(scene_json, s, used);

    const std::filesystem::path source = find_source(scene_json, s);
    if (source.empty() && notes)
        notes->push_back(where + ": the assembly " + s.source_file + " is not found unchanged beside the scene or where it "
                                 "was given: mass properties come from the distance fields, exact penetration is not measured");
    // Per geometry: its files, and how its mesh is read (the tree's recorded part, units, scale).
    struct Files {
        std::filesystem::path field, tree;
        std::string part, units;
        double scale = 1;
    };
    std::vector<Files> files(s.geometries.size());
    for (std::size_t g : used) {
        Files& f = files[g];
        f.field = scene::geometry_file(scene_json, s, g, "distance");
        f.tree = scene::geometry_file(scene_json, s, g, "tree");
        if (source.empty()) continue;
        const MovingObjectData tree = load_moving_object(f.tree);
        nlohmann::json params = tree.metadata.value("parameters", nlohmann::json::object());
        if (!params.is_object()) params = nlohmann::json::object();
        f.part = params.value("part", "@" + std::to_string(g));
        f.units = params.value("units", "");
        f.scale = params.value("scale", 1.0);
    }

    Scene out;
    out.file = scene_json;
    out.source_kind = "assembly";
    out.name = scene_json.parent_path().filename().string();
    if (out.name.empty() || out.name == ".") out.name = "scene";
    out.description = "the parts of " + s.source_name + " (" + std::to_string(s.parts.size()) + " parts)";
    for (std::size_t i = 0; i < s.parts.size(); ++i) {
        const scene::ScenePart& p = s.parts[i];
        const Files& f = files[p.geometry];
        SceneObject o;
        o.name = p.name;
        o.shape = SceneObject::Shape::mesh;
        if (!source.empty()) {
            o.mesh = source;
            o.part = f.part;
            o.units = f.units;
            o.scale = f.scale;
        }
        o.position = p.placement.position;
        o.quaternion = p.placement.quaternion;
        o.mass = mass[i];
        o.method.method = Method::vps;
        o.method.name = method_name(Method::vps);
        o.method.object = o.name;
        o.method.field = f.field;
        o.method.tree = f.tree;
        out.objects.push_back(std::move(o));
    }
    out.window_last = out.steps;
    return out;
}

}  // namespace hp::bullet
