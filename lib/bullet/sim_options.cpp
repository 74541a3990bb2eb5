// haptic-sim's scene as its options change it (sim.hpp): a haptic-sim scene file or a scene.json
// of haptic-pipeline --assembly with its moving parts, and the steps, rotations, copies and
// method variants given on the command line.
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "bullet/sim.hpp"
#include "core/error.hpp"
#include "scene/scene_file.hpp"

namespace hp::bullet {

namespace {

// NAME or NAME=KG of a --dynamic part.
DynamicPart dynamic_part(const std::string& d, double default_mass) {
    DynamicPart part{d, default_mass};
    if (const auto eq = d.rfind('='); eq != std::string::npos) {
        part.name = d.substr(0, eq);
        char* end = nullptr;
        const std::string kg = d.substr(eq + 1);
        part.mass = std::strtod(kg.c_str(), &end);
        if (kg.empty() || *end || !(part.mass > 0) || !std::isfinite(part.mass))
            fail_usage("--dynamic " + d + ": the mass after '=' must be a number > 0 (kg)");
    }
    return part;
}

// The scene's method variants named in `only` (comma-separated), in that order.
std::vector<MethodSpec> only_methods(const Scene& scene, const std::string& only) {
    std::vector<MethodSpec> kept;
    std::stringstream names(only);
    std::string name;
    while (std::getline(names, name, ',')) {
        bool found = false;
        for (const MethodSpec& m : scene.methods)
            if (m.name == name) {
                kept.push_back(m);
                found = true;
            }
        if (!found) fail_usage("--only: the scene has no method variant named '" + name + "'");
    }
    return kept;
}

}  // namespace

Scene load_sim_scene(const std::filesystem::path& path, const SceneOverrides& o,
                     const std::function<void(const std::string&)>& note) {
    Scene scene;
    if (hp::scene::looks_like_scene(path)) {
        std::vector<DynamicPart> parts;
        for (const std::string& d : o.dynamic) parts.push_back(dynamic_part(d, o.default_mass));
        std::vector<std::string> notes;
        scene = scene_from_assembly(path, parts, &notes);
        if (note)
            for (const std::string& n : notes) note(n);
    } else {
        if (!o.dynamic.empty())
            fail_usage("--dynamic: only for a scene.json of haptic-pipeline --assembly; " + path.string() +
                       " is a haptic-sim scene file (give masses in it)");
        scene = load_scene(path);
    }
    if (o.steps > 0) {
        scene.steps = o.steps;
        scene.window_last = std::min(scene.window_last, o.steps);
        if (scene.window_first > o.steps) scene.window_first = 1;
    }
    if (o.rotations >= 0) scene.rotations = o.rotations;
    if (!o.counts.empty()) {
        bool copied = false;
        for (SceneObject& obj : scene.objects)
            if (obj.copies) {
                obj.copies->counts = o.counts;
                copied = true;
            }
        if (!copied) fail_usage("--count: the scene has no object with \"copies\"");
    }
    if (!o.only.empty()) scene.methods = only_methods(scene, o.only);
    return scene;
}

}  // namespace hp::bullet
