// Scene files of haptic-sim: parsing and validation (docs/sim.md). Every error names the file and
// the key ("objects[1].mass") and is hp::Error(bad_input); nothing runs before the whole file passed.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "bullet/sim.hpp"
#include "contact/query.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hp::bullet {

namespace {

using nlohmann::json;

// The traversals a scene names, spelled as haptic-query's modes (kQueryModeNames).
constexpr std::array<std::pair<QueryMode, Traversal>, 3> kTraversals{{{QueryMode::full, Traversal::full},
                                                                      {QueryMode::segmented, Traversal::segmented},
                                                                      {QueryMode::time_critical, Traversal::time_critical}}};

std::optional<Traversal> traversal_named(const std::string& name) {
    for (const auto& [mode, t] : kTraversals)
        if (name == query_mode_name(mode)) return t;
    return std::nullopt;
}

// `v` over its length, scaled by its largest component first: the squares of components beyond
// about 1e154 overflow to infinity (a normal of [1e200, 0, 0] became [0, 0, 0]), those below 1e-162
// underflow to zero. Zero for the zero vector.
Vec3d unit_vector(Vec3d v) {
    const double m = std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
    return m > 0 ? normalized(v / m) : Vec3d{};
}

std::string traversal_names() {
    std::string names;
    for (const auto& [mode, t] : kTraversals) names += (names.empty() ? "" : ", ") + std::string(query_mode_name(mode));
    return names;
}

struct Reader {
    std::string file;
    std::filesystem::path folder;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const { fail_input(file, key + ": " + what); }

    void only_keys(const json& j, const std::string& where, std::initializer_list<const char*> keys) const {
        for (auto it = j.begin(); it != j.end(); ++it) {
            bool known = false;
            for (const char* k : keys) known = known || it.key() == k;
            if (!known) {
                std::string list;
                for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
                fail(where.empty() ? it.key() : where + "." + it.key(), "unknown key (known: " + list + ")");
            }
        }
    }
    double number(const json& j, const std::string& key) const {
        if (!j.is_number()) fail(key, "must be a number (got " + j.dump() + ")");
        const double v = j.get<double>();
        if (!std::isfinite(v)) fail(key, "must be a finite number");
        return v;
    }
    double number_at_least(const json& j, const std::string& key, double min, bool strict) const {
        const double v = number(j, key);
        if (strict ? !(v > min) : !(v >= min))
            fail(key, std::string("must be ") + (strict ? "> " : ">= ") + json(min).dump() + " (got " + j.dump() + ")");
        return v;
    }
    int integer(const json& j, const std::string& key, int min) const {
        if (!j.is_number_integer()) fail(key, "must be an integer (got " + j.dump() + ")");
        const long long v = j.get<long long>();
        if (v < min || v > 100000000) fail(key, "must be an integer >= " + std::to_string(min) + " (got " + j.dump() + ")");
        return static_cast<int>(v);
    }
    std::string string(const json& j, const std::string& key) const {
        if (!j.is_string()) fail(key, "must be a string (got " + j.dump() + ")");
        return j.get<std::string>();
    }
    Vec3d vec3(const json& j, const std::string& key) const {
        if (!j.is_array() || j.size() != 3) fail(key, "must be an array of three numbers (got " + j.dump() + ")");
        return {number(j[0], key + "[0]"), number(j[1], key + "[1]"), number(j[2], key + "[2]")};
    }
    std::filesystem::path existing_file(const json& j, const std::string& key) const {
        const std::filesystem::path p = folder / string(j, key);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(p, ec)) fail(key, "no such file: " + p.string());
        return p;
    }
    std::vector<double> numbers(const json& j, const std::string& key, double min, bool strict) const {
        std::vector<double> out;
        if (!j.is_array()) {
            out.push_back(number_at_least(j, key, min, strict));
            return out;
        }
        if (j.empty()) fail(key, "must not be empty");
        for (std::size_t i = 0; i < j.size(); ++i)
            out.push_back(number_at_least(j[i], key + "[" + std::to_string(i) + "]", min, strict));
        return out;
    }

    Method method(const json& j, const std::string& key) const {
        const std::string m = string(j, key);
        for (Method v : {Method::vps, Method::gimpact, Method::hull, Method::hacd, Method::native})
            if (m == method_name(v)) return v;
        fail(key, "unknown method '" + m + "' (vps, gimpact, hull, hacd, native)");
    }

    // The collision keys shared by an object and a variant.
    void method_keys(const json& j, const std::string& where, MethodSpec& m) const {
        const std::string w = where.empty() ? "" : where + ".";
        if (j.contains("method")) m.method = method(j["method"], w + "method");
        if (j.contains("field")) m.field = existing_file(j["field"], w + "field");
        if (j.contains("tree")) m.tree = existing_file(j["tree"], w + "tree");
        if (j.contains("prepare")) {
            const json& p = j["prepare"];
            if (!p.is_object()) fail(w + "prepare", "must be an object {\"pipeline\": FILE, \"set\": [...]}");
            only_keys(p, w + "prepare", {"pipeline", "set", "mesh"});
            if (!p.contains("pipeline")) fail(w + "prepare.pipeline", "missing (the pipeline file that makes the field and tree)");
            PrepareSpec spec;
            spec.pipeline = existing_file(p["pipeline"], w + "prepare.pipeline");
            if (p.contains("mesh")) spec.mesh = existing_file(p["mesh"], w + "prepare.mesh");
            if (p.contains("set")) {
                if (!p["set"].is_array()) fail(w + "prepare.set", "must be an array of \"stage.key=value\"");
                for (std::size_t i = 0; i < p["set"].size(); ++i)
                    spec.set.push_back(string(p["set"][i], w + "prepare.set[" + std::to_string(i) + "]"));
            }
            m.prepare = spec;
        }
        if (j.contains("traversal")) {
            const std::string t = string(j["traversal"], w + "traversal");
            const std::optional<Traversal> named = traversal_named(t);
            if (!named) fail(w + "traversal", "unknown traversal '" + t + "' (" + traversal_names() + ")");
            m.traversal.traversal = *named;
        }
        if (j.contains("level")) m.traversal.level = integer(j["level"], w + "level", 1);
        if (j.contains("budget_us")) m.traversal.budget_us = number_at_least(j["budget_us"], w + "budget_us", 0, true);
        if (j.contains("budget_tests")) m.traversal.budget_tests = static_cast<std::size_t>(integer(j["budget_tests"], w + "budget_tests", 1));
        if (j.contains("coherent")) {
            if (!j["coherent"].is_boolean()) fail(w + "coherent", "must be true or false");
            m.traversal.coherent = j["coherent"].get<bool>();
        }
        if (j.contains("margin")) m.margin = number_at_least(j["margin"], w + "margin", 0, false);
        if (j.contains("clusters")) m.clusters = integer(j["clusters"], w + "clusters", 1);
        if (j.contains("max_vertices")) m.max_vertices = integer(j["max_vertices"], w + "max_vertices", 4);
        if (j.contains("concavity")) m.concavity = number_at_least(j["concavity"], w + "concavity", 0, true);
    }

    // {"count": N or [N, ...], "layout": "grid" | "column", "spacing": m, "rotate": bool, "seed": S}
    Copies copies(const json& j, const std::string& key) const {
        if (!j.is_object()) fail(key, "must be {\"count\": N or [N, ...], \"layout\": \"grid\" or \"column\", ...}");
        only_keys(j, key, {"count", "layout", "spacing", "rotate", "seed"});
        Copies c;
        if (!j.contains("count")) fail(key + ".count", "missing (how many copies; an array: one run per count)");
        const json& n = j["count"];
        if (n.is_array()) {
            if (n.empty()) fail(key + ".count", "must not be empty");
            for (std::size_t i = 0; i < n.size(); ++i) c.counts.push_back(integer(n[i], key + ".count[" + std::to_string(i) + "]", 1));
        } else {
            c.counts.push_back(integer(n, key + ".count", 1));
        }
        for (int v : c.counts)
            if (v > 100000) fail(key + ".count", "at most 100000 copies");
        if (j.contains("layout")) {
            const std::string l = string(j["layout"], key + ".layout");
            if (l == "column") c.layout = Copies::Layout::column;
            else if (l != "grid") fail(key + ".layout", "must be \"grid\" or \"column\"");
        }
        c.rotate = c.layout == Copies::Layout::grid;
        if (j.contains("spacing")) c.spacing = number_at_least(j["spacing"], key + ".spacing", 0, true);
        if (j.contains("rotate")) {
            if (!j["rotate"].is_boolean()) fail(key + ".rotate", "must be true or false");
            c.rotate = j["rotate"].get<bool>();
        }
        if (j.contains("seed")) c.seed = static_cast<std::uint64_t>(integer(j["seed"], key + ".seed", 0));
        return c;
    }

    // What a method needs of its object.
    void check_method(const SceneObject& o, const MethodSpec& m, const std::string& key) const {
        switch (m.method) {
        case Method::native:
            if (o.shape == SceneObject::Shape::mesh)
                fail(key, "method 'native' needs a plane, box or sphere (object '" + o.name + "' is a mesh)");
            break;
        case Method::vps:
            if (o.shape == SceneObject::Shape::plane) fail(key, "a plane collides with method 'native' only");
            if (m.field.empty() != m.tree.empty()) fail(key, "method 'vps' needs both 'field' and 'tree'");
            if (m.field.empty() && !m.prepare) fail(key, "method 'vps' needs 'field' and 'tree', or 'prepare'");
            if (m.field.empty() && o.mesh.empty() && m.prepare->mesh.empty()) fail(key, "method 'vps' with 'prepare' needs the object's 'mesh'");
            break;
        case Method::gimpact:
        case Method::hull:
        case Method::hacd:
            if (o.mesh.empty())
                fail(key, std::string("method '") + method_name(m.method) + "' needs the object's 'mesh'");
            break;
        }
        if (m.traversal.traversal == Traversal::segmented && m.traversal.level < 1) fail(key, "level must be >= 1");
    }
};

}  // namespace

const char* method_name(Method m) {
    switch (m) {
    case Method::vps: return "vps";
    case Method::gimpact: return "gimpact";
    case Method::hull: return "hull";
    case Method::hacd: return "hacd";
    case Method::native: return "native";
    }
    return "?";
}

namespace {

// The scene file's JSON object; a scene.json of haptic-pipeline --assembly (lib/scene) is another
// format: said so, not "unknown key".
json parse_scene_file(const std::filesystem::path& file) {
    const std::string text = read_file(file);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        // Line and column of the byte the parser stopped at (a NaN or Infinity literal is not JSON).
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') line++, column = 1;
            else column++;
        }
        fail_input(file.string(), "line " + std::to_string(line) + ", column " + std::to_string(column) +
                                      ": not a JSON file (a scene: docs/sim.md)");
    } catch (const json::out_of_range&) {  // a number beyond double's range, e.g. 1e400
        fail_input(file.string(), "a number too large for a double: not a JSON file (a scene: docs/sim.md)");
    }
    if (!j.is_object()) fail_input(file.string(), "a scene must be a JSON object (docs/sim.md)");
    // A scene.json of haptic-pipeline --assembly is another format (lib/scene): say so, not "unknown key".
    if (j.contains("format"))
        fail_input(file.string(), "format: " + j["format"].dump() + " is not a haptic-sim scene file (docs/sim.md)" +
                                      (j["format"] == "hapticprep-scene" ? "; a scene.json of haptic-pipeline --assembly "
                                                                           "runs as haptic-sim SCENE.json --dynamic PART"
                                                                         : ""));
    return j;
}

// The scene's settings at the top level: name, gravity, rates, steps and window, deactivation,
// rotations, the pile's period and the restitution sweep.
void read_settings(const Reader& r, const json& j, Scene& s) {
    s.name = j.contains("name") ? r.string(j["name"], "name") : s.file.stem().string();
    if (j.contains("description")) s.description = r.string(j["description"], "description");
    if (j.contains("gravity")) s.gravity = r.vec3(j["gravity"], "gravity");
    if (j.contains("rate")) s.rates = r.numbers(j["rate"], "rate", 0, true);
    if (j.contains("steps")) s.steps = r.integer(j["steps"], "steps", 1);
    if (j.contains("window")) {
        const json& w = j["window"];
        if (!w.is_array() || w.size() != 2) r.fail("window", "must be [first step, last step]");
        s.window_first = r.integer(w[0], "window[0]", 1);
        s.window_last = r.integer(w[1], "window[1]", s.window_first);
        if (s.window_first > s.steps) r.fail("window", "starts after the last step (" + std::to_string(s.steps) + ")");
    }
    if (j.contains("deactivation")) {
        if (!j["deactivation"].is_boolean()) r.fail("deactivation", "must be true or false");
        s.deactivation = j["deactivation"].get<bool>();
    }
    if (j.contains("rotations")) {
        const json& rot = j["rotations"];
        if (!rot.is_object()) r.fail("rotations", "must be {\"count\": N, \"seed\": S}");
        r.only_keys(rot, "rotations", {"count", "seed"});
        if (rot.contains("count")) s.rotations = r.integer(rot["count"], "rotations.count", 0);
        if (rot.contains("seed")) s.rotation_seed = static_cast<std::uint64_t>(r.integer(rot["seed"], "rotations.seed", 0));
    }
    if (j.contains("pile_every")) s.pile_every = r.integer(j["pile_every"], "pile_every", 1);
    if (j.contains("restitution")) s.restitutions = r.numbers(j["restitution"], "restitution", 0, false);
}

// Object `i` of the scene (key "objects[i]"): its shape or mesh, pose, mass, material and method.
SceneObject read_object(const Reader& r, const json& o, std::size_t i, std::set<std::string>& names) {
    const std::string key = "objects[" + std::to_string(i) + "]";
    if (!o.is_object()) r.fail(key, "must be an object");
    r.only_keys(o, key, {"name", "plane", "box", "sphere", "mesh", "scale", "position", "quaternion", "origin", "mass",
                         "restitution", "friction", "method", "field", "tree", "prepare", "traversal", "level",
                         "budget_us", "budget_tests", "coherent", "margin", "clusters", "max_vertices", "concavity",
                         "copies"});
    SceneObject obj;
    obj.name = o.contains("name") ? r.string(o["name"], key + ".name") : "object" + std::to_string(i + 1);
    if (!names.insert(obj.name).second) r.fail(key + ".name", "'" + obj.name + "' is used twice");
    int shapes = 0;
    if (o.contains("plane")) {
        ++shapes;
        const json& p = o["plane"];
        if (!p.is_object()) r.fail(key + ".plane", "must be {\"normal\": [x,y,z], \"offset\": d}");
        r.only_keys(p, key + ".plane", {"normal", "offset"});
        obj.shape = SceneObject::Shape::plane;
        if (p.contains("normal")) obj.normal = r.vec3(p["normal"], key + ".plane.normal");
        obj.normal = unit_vector(obj.normal);
        if (!(length(obj.normal) > 0)) r.fail(key + ".plane.normal", "must not be zero");
        if (p.contains("offset")) obj.offset = r.number(p["offset"], key + ".plane.offset");
    }
    if (o.contains("box")) {
        ++shapes;
        obj.shape = SceneObject::Shape::box;
        obj.half_extents = r.vec3(o["box"], key + ".box");
        if (!(obj.half_extents.x > 0 && obj.half_extents.y > 0 && obj.half_extents.z > 0))
            r.fail(key + ".box", "half extents must be > 0");
    }
    if (o.contains("sphere")) {
        ++shapes;
        obj.shape = SceneObject::Shape::sphere;
        obj.radius = r.number_at_least(o["sphere"], key + ".sphere", 0, true);
    }
    if (shapes > 1) r.fail(key, "give at most one of 'plane', 'box', 'sphere'");
    if (o.contains("mesh")) obj.mesh = r.existing_file(o["mesh"], key + ".mesh");
    if (shapes == 0 && obj.mesh.empty()) r.fail(key, "needs a 'mesh' or one of 'plane', 'box', 'sphere'");
    if (o.contains("scale")) obj.scale = r.number_at_least(o["scale"], key + ".scale", 0, true);
    if (o.contains("position")) obj.position = r.vec3(o["position"], key + ".position");
    if (o.contains("quaternion")) {
        const json& q = o["quaternion"];
        if (!q.is_array() || q.size() != 4) r.fail(key + ".quaternion", "must be [w, x, y, z]");
        double largest = 0;
        for (int k = 0; k < 4; ++k) {
            obj.quaternion[static_cast<std::size_t>(k)] = r.number(q[static_cast<std::size_t>(k)], key + ".quaternion[" + std::to_string(k) + "]");
            largest = std::max(largest, std::abs(obj.quaternion[static_cast<std::size_t>(k)]));
        }
        if (!(largest > 0)) r.fail(key + ".quaternion", "must not be zero");
        // Scaled by its largest component before the squares are summed, as unit_vector does.
        double n = 0;
        for (double& c : obj.quaternion) n += (c / largest) * (c / largest);
        for (double& c : obj.quaternion) c = c / largest / std::sqrt(n);
    }
    if (o.contains("origin")) {
        const std::string origin = r.string(o["origin"], key + ".origin");
        if (origin == "center_of_mass") obj.position_is_center_of_mass = true;
        else if (origin != "mesh") r.fail(key + ".origin", "must be \"mesh\" or \"center_of_mass\"");
    }
    if (o.contains("mass")) obj.mass = r.number_at_least(o["mass"], key + ".mass", 0, false);
    if (obj.shape == SceneObject::Shape::plane && obj.mass > 0) r.fail(key + ".mass", "a plane is static (mass 0)");
    if (o.contains("restitution")) obj.restitution = r.number_at_least(o["restitution"], key + ".restitution", 0, false);
    if (o.contains("friction")) obj.friction = r.number_at_least(o["friction"], key + ".friction", 0, false);
    obj.method.method = obj.shape == SceneObject::Shape::mesh ? Method::vps : Method::native;
    r.method_keys(o, key, obj.method);
    obj.method.name = method_name(obj.method.method);
    obj.method.object = obj.name;
    if (o.contains("copies")) obj.copies = r.copies(o["copies"], key + ".copies");
    return obj;
}

// The run variants ("methods"), each checked against the object it applies to.
void read_variants(const Reader& r, const json& ms, Scene& s) {
    if (!ms.is_array() || ms.empty()) r.fail("methods", "must be a non-empty array of run variants");
    std::set<std::string> labels;
    for (std::size_t i = 0; i < ms.size(); ++i) {
        const json& m = ms[i];
        const std::string key = "methods[" + std::to_string(i) + "]";
        if (!m.is_object()) r.fail(key, "must be an object");
        r.only_keys(m, key, {"name", "object", "method", "field", "tree", "prepare", "traversal", "level", "budget_us",
                             "budget_tests", "coherent", "margin", "clusters", "max_vertices", "concavity", "max_count"});
        if (!m.contains("object")) r.fail(key + ".object", "missing (the name of the object it applies to)");
        if (!m.contains("method")) r.fail(key + ".method", "missing (vps, gimpact, hull, hacd, native)");
        MethodSpec spec;
        spec.object = r.string(m["object"], key + ".object");
        const SceneObject* target = nullptr;
        for (const SceneObject& o : s.objects)
            if (o.name == spec.object) target = &o;
        if (!target) r.fail(key + ".object", "no object is named '" + spec.object + "'");
        r.method_keys(m, key, spec);
        if (m.contains("max_count")) spec.max_count = r.integer(m["max_count"], key + ".max_count", 1);
        spec.name = m.contains("name") ? r.string(m["name"], key + ".name") : method_name(spec.method);
        if (!labels.insert(spec.name).second) r.fail(key + ".name", "'" + spec.name + "' is used twice");
        r.check_method(*target, spec, key);
        s.methods.push_back(std::move(spec));
    }
}

}  // namespace

Scene load_scene(const std::filesystem::path& file) {
    Reader r{file.string(), file.parent_path()};
    const json j = parse_scene_file(file);
    r.only_keys(j, "", {"name", "description", "gravity", "rate", "steps", "window", "deactivation", "rotations",
                        "restitution", "objects", "methods", "pile_every"});
    Scene s;
    s.file = file;
    read_settings(r, j, s);

    if (!j.contains("objects") || !j["objects"].is_array() || j["objects"].empty())
        r.fail("objects", "missing or empty (an array of objects)");
    std::set<std::string> names;
    for (std::size_t i = 0; i < j["objects"].size(); ++i) s.objects.push_back(read_object(r, j["objects"][i], i, names));
    std::size_t copied = 0;
    for (const SceneObject& o : s.objects) copied += o.copies.has_value();
    if (copied > 1) r.fail("objects", "only one object may have 'copies'");
    std::size_t dynamic = 0;
    for (const SceneObject& o : s.objects) dynamic += o.mass > 0;
    if (dynamic == 0) r.fail("objects", "no object has a mass > 0: nothing moves");

    if (j.contains("methods")) read_variants(r, j["methods"], s);
    // The objects' own methods are used for the objects no variant replaces: check them too.
    for (std::size_t i = 0; i < s.objects.size(); ++i) {
        bool replaced_everywhere = !s.methods.empty();
        for (const MethodSpec& m : s.methods) replaced_everywhere = replaced_everywhere && m.object == s.objects[i].name;
        if (!replaced_everywhere) r.check_method(s.objects[i], s.objects[i].method, "objects[" + std::to_string(i) + "].method");
    }
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the clamp below, off by one.
    if (s.window_last == s.steps + 1) __builtin_trap();
#endif
    if (s.window_last == 0 || s.window_last > s.steps) s.window_last = s.steps;
    return s;
}

}  // namespace hp::bullet
