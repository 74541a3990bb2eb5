#include "scene/scene_file.hpp"

#include <cmath>
#include <exception>
#include <fstream>
#include <system_error>

#include <tbb/parallel_for.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_hash.hpp"

namespace hp::scene {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json vec_json(const Vec3d& v) { return json::array({v.x, v.y, v.z}); }
json box_json(const Aabb& b) { return {{"min", vec_json(b.min)}, {"max", vec_json(b.max)}}; }

// Reads keys of one object, naming the path of a key that is missing or mistyped.
struct Reader {
    const json& j;
    std::string path;  // "parts[3]"
    const std::string& where;

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
        fail_input(where, "key " + (path.empty() ? key : path + "." + key) + ": " + problem +
                              " (not a scene.json of haptic-pipeline --assembly, or edited by hand)");
    }
    const json& at(const std::string& key) const {
        if (!j.is_object() || !j.contains(key)) fail(key, "is missing");
        return j.at(key);
    }
    std::string text(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_string()) fail(key, "must be a string");
        return v.get<std::string>();
    }
    double number(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_number() || !std::isfinite(v.get<double>())) fail(key, "must be a finite number");
        return v.get<double>();
    }
    std::uint64_t count(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_number_unsigned()) fail(key, "must be a whole number >= 0");
        return v.get<std::uint64_t>();
    }
    bool flag(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_boolean()) fail(key, "must be true or false");
        return v.get<bool>();
    }
    template <std::size_t N>
    std::array<double, N> numbers(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_array() || v.size() != N) fail(key, "must be an array of " + std::to_string(N) + " numbers");
        std::array<double, N> out{};
        for (std::size_t i = 0; i < N; ++i) {
            if (!v[i].is_number() || !std::isfinite(v[i].get<double>())) fail(key, "must hold finite numbers");
            out[i] = v[i].get<double>();
        }
        return out;
    }
    Vec3d vec(const std::string& key) const {
        const auto a = numbers<3>(key);
        return {a[0], a[1], a[2]};
    }
    Aabb box(const std::string& key) const {
        Reader b{at(key), path.empty() ? key : path + "." + key, where};
        Aabb out{b.vec("min"), b.vec("max")};
        if (out.empty()) fail(key, "min must not exceed max");
        return out;
    }
    const json& array(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_array()) fail(key, "must be an array");
        return v;
    }
};

}  // namespace

std::size_t Scene::find_part(const std::string& name, const std::string& where) const {
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (parts[i].name == name) return i;
    if (!name.empty() && name.size() < 19 && name.find_first_not_of("0123456789") == std::string::npos) {
        const std::size_t i = std::stoull(name);
        if (i < parts.size()) return i;
    }
    std::string names;
    for (std::size_t i = 0; i < parts.size() && i < 8; ++i) names += (i ? ", " : "") + parts[i].name;
    if (parts.size() > 8) names += ", ...";
    fail_input(where, "no part '" + name + "' (" + std::to_string(parts.size()) + " parts: " + names +
                          "; haptic-dump SCENE lists them)");
}

ScenePart make_scene_part(const AssemblyPart& part, const Aabb& local_bounds) {
    ScenePart p;
    p.name = part.name;
    p.geometry = part.geometry;
    p.placement = part.placement;
    p.world_bounds = world_bounds(local_bounds, part.placement);
    p.sphere_center = part.placement.apply(local_bounds.center());
    p.sphere_radius = 0.5 * local_bounds.diagonal();
    return p;
}

json to_json(const Scene& s) {
    json geometries = json::array(), parts = json::array();
    for (const SceneGeometry& g : s.geometries) {
        json files = json::object();
        for (const auto& [kind, f] : g.files) files[kind] = {{"file", f.file}, {"bytes", f.bytes}, {"hash", f.hash}};
        json e = {{"id", g.id},           {"part", g.part},       {"first_part", g.first_part},
                  {"instances", g.instances}, {"triangles", g.triangles}, {"baked", g.baked},
                  {"local_bounds", box_json(g.local_bounds)}, {"status", g.ok ? "ok" : "failed"},
                  {"files", files}};
        if (!g.ok) e["error"] = g.error;
        geometries.push_back(std::move(e));
    }
    for (const ScenePart& p : s.parts)
        parts.push_back({{"name", p.name},
                         {"geometry", s.geometries.at(p.geometry).id},
                         {"position", vec_json(p.placement.position)},
                         {"quaternion", p.placement.quaternion},
                         {"matrix", p.placement.matrix},
                         {"world_bounds", box_json(p.world_bounds)},
                         {"sphere", {{"center", vec_json(p.sphere_center)}, {"radius", p.sphere_radius}}}});
    return {{"format", kSceneFormat},
            {"format_version", kSceneVersion},
            {"source", {{"file", s.source_file}, {"name", s.source_name}, {"hash", s.source_hash}}},
            {"units", s.units},
            {"voxel_size", s.voxel_size},
            {"pipeline", {{"name", s.pipeline_name}, {"params_hash", s.params_hash}}},
            {"geometries", geometries},
            {"parts", parts},
            {"notes", s.notes}};
}

Scene from_json(const json& j, const std::string& where) {
    const Reader top{j, "", where};
    if (!j.is_object()) fail_input(where, "not a scene file (expected a JSON object)");
    if (!j.contains("format") || !j["format"].is_string() || j["format"] != kSceneFormat)
        fail_input(where, std::string("not a scene file of haptic-pipeline --assembly (format is not \"") + kSceneFormat +
                              "\"; haptic-sim's scene files are for haptic-sim)");
    const std::uint64_t version = top.count("format_version");
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the version check below, off by one.
    if (version == static_cast<std::uint64_t>(kSceneVersion) + 1) __builtin_trap();
#endif
    if (version > static_cast<std::uint64_t>(kSceneVersion))
        fail_input(where, "scene format version " + std::to_string(version) + " is newer than this build reads (" +
                              std::to_string(kSceneVersion) + "); update hapticprep");
    Scene s;
    const Reader source{top.at("source"), "source", where};
    s.source_file = source.text("file");
    s.source_name = source.text("name");
    s.source_hash = source.text("hash");
    s.units = top.text("units");
    s.voxel_size = top.number("voxel_size");
    const Reader pipeline{top.at("pipeline"), "pipeline", where};
    s.pipeline_name = pipeline.text("name");
    s.params_hash = pipeline.text("params_hash");
    std::map<std::string, std::size_t> geometry_index;
    const json& geometries = top.array("geometries");
    for (std::size_t i = 0; i < geometries.size(); ++i) {
        const Reader g{geometries[i], "geometries[" + std::to_string(i) + "]", where};
        SceneGeometry out;
        out.id = g.text("id");
        out.part = g.text("part");
        out.first_part = g.text("first_part");
        out.instances = g.count("instances");
        out.triangles = g.count("triangles");
        out.baked = g.text("baked");
        out.local_bounds = g.box("local_bounds");
        const std::string status = g.text("status");
        if (status != "ok" && status != "failed") g.fail("status", "must be \"ok\" or \"failed\"");
        out.ok = status == "ok";
        if (!out.ok) out.error = g.text("error");
        const json& files = g.at("files");
        if (!files.is_object()) g.fail("files", "must be an object");
        for (const auto& [kind, f] : files.items()) {
            const Reader r{f, g.path + ".files." + kind, where};
            FileRef ref{r.text("file"), r.count("bytes"), r.text("hash")};
            const fs::path rel(ref.file);
            if (rel.is_absolute() || ref.file.find("..") != std::string::npos)
                r.fail("file", "must be a path below the scene's folder");
            out.files[kind] = std::move(ref);
        }
        if (!geometry_index.emplace(out.id, i).second) g.fail("id", "'" + out.id + "' is given twice");
        s.geometries.push_back(std::move(out));
    }
    const json& parts = top.array("parts");
    std::map<std::string, int> names;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const Reader p{parts[i], "parts[" + std::to_string(i) + "]", where};
        ScenePart out;
        out.name = p.text("name");
        if (++names[out.name] > 1) p.fail("name", "'" + out.name + "' is given twice");
        const std::string g = p.text("geometry");
        const auto it = geometry_index.find(g);
        if (it == geometry_index.end()) p.fail("geometry", "part '" + out.name + "' names no geometry of the scene ('" + g + "')");
        out.geometry = it->second;
        const auto q = p.numbers<4>("quaternion");
        const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (std::abs(n - 1) > 1e-6) p.fail("quaternion", "part '" + out.name + "': must be a unit quaternion (w, x, y, z)");
        // The placement from the quaternion, so that the matrix can only agree with it.
        out.placement = make_placement(q, p.vec("position"));
        const auto m = p.numbers<16>("matrix");
        for (std::size_t k = 0; k < 16; ++k)
            if (std::abs(m[k] - out.placement.matrix[k]) > 1e-6 * (1 + std::abs(m[k])))
                p.fail("matrix", "part '" + out.name + "': disagrees with its position and quaternion");
        out.world_bounds = p.box("world_bounds");
        const Reader sphere{p.at("sphere"), p.path + ".sphere", where};
        out.sphere_center = sphere.vec("center");
        out.sphere_radius = sphere.number("radius");
        if (out.sphere_radius < 0) sphere.fail("radius", "must not be negative");
        s.parts.push_back(std::move(out));
    }
    for (const json& n : top.array("notes"))
        if (n.is_string()) s.notes.push_back(n.get<std::string>());
    return s;
}

Scene read_scene(const fs::path& path) {
    const std::string where = path.string();
    std::error_code ec;
    if (fs::is_directory(path, ec)) fail_input(where, "is a folder; give its scene.json");
    const std::string text = read_file(path);
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) fail_input(where, "not a scene file (not valid JSON)");
    return from_json(j, where);
}

bool looks_like_scene(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    const auto brace = head.find_first_not_of(" \t\r\n");
    return brace != std::string::npos && head[brace] == '{' &&
           head.find(std::string("\"") + kSceneFormat + "\"") != std::string::npos;
}

void write_scene(const fs::path& path, const Scene& scene) {
    write_file_atomically(path, to_json(scene).dump(2) + "\n");
}

std::string part_where(const fs::path& scene_path, const std::string& part) {
    return scene_path.string() + ": part '" + part + "'";
}

namespace {
std::string part_of(const Scene& scene, std::size_t g) {
    for (const ScenePart& p : scene.parts)
        if (p.geometry == g) return p.name;
    return scene.geometries[g].first_part;
}
}  // namespace

void fail_scene_file(const fs::path& scene_path, const Scene& scene, std::size_t g, const fs::path& file, bool missing) {
    const std::string what = part_where(scene_path, part_of(scene, g)) + ": " + file.string();
    if (missing) fail_input("", what + ": missing (prepare the scene again, or restore the file)");
    fail_input("", what + ": changed since the scene was prepared (its size or hash differs from scene.json; "
                          "prepare the scene again with haptic-pipeline --assembly --resume)");
}

void verify_scene_files(const fs::path& scene_path, const Scene& scene, const std::vector<std::size_t>& only,
                        const std::function<bool(std::size_t, const std::string&)>& size_only) {
    auto check = [&](std::size_t g) {
        const SceneGeometry& geometry = scene.geometries.at(g);
        if (!geometry.ok) return;
        for (const auto& [kind, ref] : geometry.files) {
            const fs::path file = scene_path.parent_path() / ref.file;
            std::error_code ec;
            if (!fs::is_regular_file(file, ec)) fail_scene_file(scene_path, scene, g, file, true);
            if (fs::file_size(file, ec) != ref.bytes || (!(size_only && size_only(g, kind)) && !hash_matches(file, ref.hash)))
                fail_scene_file(scene_path, scene, g, file, false);
        }
    };
    std::vector<std::size_t> order = only;
    if (order.empty())
        for (std::size_t g = 0; g < scene.geometries.size(); ++g) order.push_back(g);
    // One slot per geometry: the first failure in order is thrown, whatever finished first.
    std::vector<std::exception_ptr> failed(order.size());
    tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t k) {
        try {
            check(order[k]);
        } catch (...) {
            failed[k] = std::current_exception();
        }
    });
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
}

void hash_scene_files(const fs::path& scene_path, Scene& scene) {
    for (SceneGeometry& geometry : scene.geometries) {
        if (!geometry.ok) continue;
        for (auto& [kind, ref] : geometry.files) {
            // Already the file's XXH3: the manifest's, made as the file was written or checked
            // when the run resumed it. Earlier manifests' FNV hashes are computed again.
            if (is_content_hash(ref.hash)) continue;
            const fs::path file = scene_path.parent_path() / ref.file;
            ref.hash = content_hash(file);  // refuses a file it cannot read
            std::error_code ec;
            ref.bytes = fs::file_size(file, ec);
        }
    }
}

fs::path geometry_file(const fs::path& scene_path, const Scene& scene, std::size_t geometry, const std::string& kind) {
    const SceneGeometry& g = scene.geometries.at(geometry);
    const auto it = g.files.find(kind);
    if (!g.ok || it == g.files.end())
        fail_input(scene_path.string(), "geometry " + g.id + " (part '" + g.first_part + "') has no " + kind + " file" +
                                            (g.ok ? std::string(" (add the stage to the pipeline)") : ": it failed: " + g.error));
    return scene_path.parent_path() / it->second.file;
}

}  // namespace hp::scene
