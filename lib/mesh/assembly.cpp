#include "mesh/assembly.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "mesh/assembly_build.hpp"
#include "mesh/cad.hpp"
#include "mesh/import.hpp"

namespace hp {

Vec3d Placement::apply(const Vec3d& p) const {
    const auto& m = matrix;
    return {m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3], m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
            m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11]};
}

Placement make_placement(const Mat3& r, const Vec3d& position) {
    // Shepperd (1978): the largest of w, x, y, z from the trace and the diagonal, the others from
    // the off-diagonal sums and differences divided by it: stable for every rotation.
    std::array<double, 4> q{};
    const double tr = r[0][0] + r[1][1] + r[2][2];
    if (tr >= r[0][0] && tr >= r[1][1] && tr >= r[2][2]) {
        const double w = 0.5 * std::sqrt(std::max(0.0, 1 + tr));
        q = {w, (r[2][1] - r[1][2]) / (4 * w), (r[0][2] - r[2][0]) / (4 * w), (r[1][0] - r[0][1]) / (4 * w)};
    } else if (r[0][0] >= r[1][1] && r[0][0] >= r[2][2]) {
        const double x = 0.5 * std::sqrt(std::max(0.0, 1 + r[0][0] - r[1][1] - r[2][2]));
        q = {(r[2][1] - r[1][2]) / (4 * x), x, (r[0][1] + r[1][0]) / (4 * x), (r[0][2] + r[2][0]) / (4 * x)};
    } else if (r[1][1] >= r[2][2]) {
        const double y = 0.5 * std::sqrt(std::max(0.0, 1 - r[0][0] + r[1][1] - r[2][2]));
        q = {(r[0][2] - r[2][0]) / (4 * y), (r[0][1] + r[1][0]) / (4 * y), y, (r[1][2] + r[2][1]) / (4 * y)};
    } else {
        const double z = 0.5 * std::sqrt(std::max(0.0, 1 - r[0][0] - r[1][1] + r[2][2]));
        q = {(r[1][0] - r[0][1]) / (4 * z), (r[0][2] + r[2][0]) / (4 * z), (r[1][2] + r[2][1]) / (4 * z), z};
    }
    return make_placement(q, position);
}

Placement make_placement(std::array<double, 4> q, const Vec3d& position) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (double& c : q) c /= n;
    if (q[0] < 0)
        for (double& c : q) c = -c;
    const auto [w, x, y, z] = q;
    Placement p;
    p.position = position;
    p.quaternion = q;
    p.matrix = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),     position.x,
                2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),     position.y,
                2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y), position.z,
                0,                       0,                       0,                       1};
    return p;
}

Aabb world_bounds(const Aabb& local, const Placement& placement) {
    Aabb out;
    if (local.empty()) return out;
    for (int c = 0; c < 8; ++c)
        out.extend(placement.apply({c & 1 ? local.max.x : local.min.x, c & 2 ? local.max.y : local.min.y,
                                    c & 4 ? local.max.z : local.min.z}));
    return out;
}

namespace {

// A vertex in a part's frame: `linear` applied in double precision.
Vec3d apply_linear(const Mat3& linear, float px, float py, float pz) {
    const double x = px, y = py, z = pz;
    return {linear[0][0] * x + linear[0][1] * y + linear[0][2] * z, linear[1][0] * x + linear[1][1] * y + linear[1][2] * z,
            linear[2][0] * x + linear[2][1] * y + linear[2][2] * z};
}

// The triangles of a node's meshes in the node's frame, `linear` applied (identity unless baked).
TriMesh node_soup(const aiScene* scene, const aiNode* node, const Mat3& linear, std::size_t& dropped) {
    TriMesh soup;
    for (unsigned mi = 0; mi < node->mNumMeshes; ++mi) {
        if (node->mMeshes[mi] >= scene->mNumMeshes) continue;
        const aiMesh* mesh = scene->mMeshes[node->mMeshes[mi]];
        if (!mesh || !mesh->mVertices) continue;
        const auto base = static_cast<std::uint32_t>(soup.vertices.size());
        for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
            const aiVector3D& p = mesh->mVertices[v];
            soup.vertices.push_back(apply_linear(linear, p.x, p.y, p.z));
        }
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
            const aiFace& face = mesh->mFaces[f];
            bool valid = face.mNumIndices == 3 && face.mIndices;
            std::array<std::uint32_t, 3> t{};
            for (unsigned c = 0; valid && c < 3; ++c) {
                valid = face.mIndices[c] < mesh->mNumVertices;
                t[c] = base + face.mIndices[c];
            }
            if (valid) soup.triangles.push_back(t);
            else ++dropped;
        }
    }
    return soup;
}

// What a part needs to know of an aiMesh before its triangles are copied: a hash of its content
// (vertices and faces as stored), its triangles and its points/lines. Computed once per mesh, so
// that a file of many instances copies and hashes each mesh once, not once per part.
struct MeshFacts {
    std::uint64_t hash = 0;
    std::size_t triangles = 0, dropped = 0;
};

MeshFacts mesh_facts(const aiMesh* mesh) {
    MeshFacts f;
    if (!mesh || !mesh->mVertices) return f;
    f.hash = hash64(mesh->mVertices, mesh->mNumVertices * sizeof(aiVector3D));
    for (unsigned i = 0; i < mesh->mNumFaces; ++i) {
        const aiFace& face = mesh->mFaces[i];
        bool valid = face.mNumIndices == 3 && face.mIndices;
        for (unsigned c = 0; valid && c < 3; ++c) valid = face.mIndices[c] < mesh->mNumVertices;
        if (!valid) {
            ++f.dropped;
            continue;
        }
        ++f.triangles;
        f.hash = hash64(face.mIndices, 3 * sizeof(unsigned), f.hash);
    }
    return f;
}

std::uint64_t soup_hash(const TriMesh& soup) {
    const std::uint64_t h = hash64(soup.vertices.data(), soup.vertices.size() * sizeof(Vec3d));
    return hash64(soup.triangles.data(), soup.triangles.size() * sizeof(soup.triangles[0]), h);
}

double det3(const Mat3& a) {
    return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
           a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

// How far R R^T is from the identity (largest entry of the difference).
double orthonormality_error(const Mat3& r) {
    double e = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double d = 0;
            for (int k = 0; k < 3; ++k) d += r[i][k] * r[j][k];
            e = std::max(e, std::abs(d - (i == j ? 1.0 : 0.0)));
        }
    return e;
}

// A transform's linear part within this of a rotation times a uniform scale is one: Assimp's
// matrices are single precision, and a few of them multiplied lose a few ulps of 1e-7.
constexpr double kRigidTolerance = 1e-5;

struct Walker {
    const aiScene* scene;
    std::string where;
    AssemblyBuilder& builder;
    std::set<const aiNode*> on_path;
    std::vector<std::optional<MeshFacts>> facts;  // by aiMesh index, computed on first use

    AssemblyBuilder::Content content_of(const aiNode* node) {
        AssemblyBuilder::Content c;
        for (unsigned mi = 0; mi < node->mNumMeshes; ++mi) {
            const unsigned index = node->mMeshes[mi];
            if (index >= scene->mNumMeshes) continue;
            if (facts.size() < scene->mNumMeshes) facts.resize(scene->mNumMeshes);
            if (!facts[index]) facts[index] = mesh_facts(scene->mMeshes[index]);
            c.triangles += facts[index]->triangles;
            c.dropped += facts[index]->dropped;
            c.key += hex64(facts[index]->hash) + ",";
        }
        return c;
    }

    void visit(const aiNode* node, const aiMatrix4x4& parent, const std::string& path, int depth) {
        if (depth > 1000 || on_path.count(node))
            fail_input(where, "node '" + path + "': the node graph is cyclic or deeper than 1000 levels (repair the export)");
        on_path.insert(node);
        const aiMatrix4x4 m = parent * node->mTransformation;
        if (node->mNumMeshes > 0) {
            const Mat3 a{{{m.a1, m.a2, m.a3}, {m.b1, m.b2, m.b3}, {m.c1, m.c2, m.c3}}};
            const AssemblyBuilder::Content content = content_of(node);
            builder.add_part(path.empty() ? std::string("root") : path, a, Vec3d{m.a4, m.b4, m.c4},
                             [&](const Mat3& linear, std::size_t& dropped) { return node_soup(scene, node, linear, dropped); },
                             &content);
        }
        for (unsigned c = 0; c < node->mNumChildren; ++c) {
            const aiNode* child = node->mChildren[c];
            if (!child) continue;
            std::string name = child->mName.C_Str();
            if (name.empty()) name = "node" + std::to_string(c);
            visit(child, m, path.empty() ? name : path + "/" + name, depth + 1);
        }
        on_path.erase(node);
    }
};

// A natively read OBJ file (mesh/obj_native.hpp) as Walker reads Assimp's scene of it: every
// node below the root, untransformed, a part named as the node when it has meshes; a mesh's key
// hashes its corners' positions then its triangles, the bytes mesh_facts hashes of Assimp's mesh.
void add_obj_parts(const ObjScene& obj, AssemblyBuilder& builder) {
    const aiMatrix4x4 m = aiMatrix4x4() * aiMatrix4x4();
    const Mat3 a{{{m.a1, m.a2, m.a3}, {m.b1, m.b2, m.b3}, {m.c1, m.c2, m.c3}}};
    for (const ObjNode& node : obj.nodes) {
        if (node.meshes.empty()) continue;
        AssemblyBuilder::Content content;
        for (std::uint32_t mi : node.meshes) {
            const ObjMesh& mesh = obj.meshes[mi];
            std::uint64_t hash = hash64(nullptr, 0);
            for (std::uint32_t c : mesh.corners) hash = hash64(obj.positions[c].data(), sizeof(obj.positions[c]), hash);
            for (const auto& t : mesh.triangles) hash = hash64(t.data(), sizeof(t), hash);
            content.triangles += mesh.triangles.size();
            content.key += hex64(hash) + ",";
        }
        const auto soup_of = [&](const Mat3& linear, std::size_t&) {
            TriMesh soup;
            const auto placed = [&](float x, float y, float z) { return apply_linear(linear, x, y, z); };
            for (std::uint32_t mi : node.meshes) append_obj_mesh(obj, obj.meshes[mi], soup, placed);
            return soup;
        };
        builder.add_part(node.name, a, Vec3d{m.a4, m.b4, m.c4}, soup_of, &content);
    }
}

}  // namespace

std::string AssemblyBuilder::unique_name(const std::string& name) {
    const std::size_t n = ++name_uses_[name];
    if (n == 1) return name;
    std::string candidate;
    for (std::size_t k = n;; ++k) {
        candidate = name + "#" + std::to_string(k);
        if (!name_uses_.count(candidate)) break;
    }
    ++name_uses_[candidate];
    return candidate;
}

void AssemblyBuilder::add_part(const std::string& path, const Mat3& a, const Vec3d& t, const SoupOf& soup_of,
                               const Content* content) {
    const std::string name = unique_name(path);
    for (const auto& row : a)
        for (double v : row)
            if (!std::isfinite(v))
                fail_input(where_, "part '" + name + "': its node transform has a NaN or infinite entry (repair the export)");
    if (!is_finite(t))
        fail_input(where_, "part '" + name + "': its node transform has a NaN or infinite entry (repair the export)");

    // Rigid up to a uniform scale s: a = s R with R a rotation.
    const double det = det3(a);
    const double s = std::cbrt(std::abs(det));
    Mat3 r = a;
    for (auto& row : r)
        for (double& v : row) v = s > 0 ? v / s : 0;
    const bool rotation = det > 0 && orthonormality_error(r) <= kRigidTolerance;
    const bool unit_scale = rotation && std::abs(s - 1) <= kRigidTolerance;

    Mat3 linear{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    std::string baked, key_suffix;
    if (rotation && !unit_scale) {
        linear = {{{s, 0, 0}, {0, s, 0}, {0, 0, s}}};
        char buf[64];
        std::snprintf(buf, sizeof buf, "scale %.9g", s);
        baked = buf;
        key_suffix = "|" + baked;
    } else if (!rotation) {
        linear = a;
        baked = det < 0 ? "reflection" : "non-uniform scale";
        key_suffix = "|own " + std::to_string(out_.parts.size());  // a geometry of its own
    }
    std::size_t dropped = content ? content->dropped : 0;
    TriMesh soup;
    if (!content) soup = soup_of(linear, dropped);
    if (content ? content->triangles == 0 : soup.triangles.empty()) {
        out_.notes.push_back("part '" + name + "' has no triangles" +
                             (dropped > 0 ? std::string(" (points or lines only)") : std::string()) + "; left out");
        return;
    }
    AssemblyPart part;
    part.name = name;
    part.index = out_.parts.size();
    part.dropped_primitives = dropped;
    part.placement = make_placement(rotation ? r : Mat3{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, t * out_.factor);
    const std::string key = (content ? content->key : hex64(soup_hash(soup))) + key_suffix;
    auto [it, fresh] = geometry_of_.emplace(key, out_.geometries.size());
    if (fresh) {
        AssemblyGeometry& g = out_.geometries.emplace_back();
        g.id = "g" + std::to_string(it->second);
        if (content) {
            std::size_t ignored = 0;
            soup = soup_of(linear, ignored);  // once per geometry
        }
        g.soup = std::move(soup);
        g.first_part = part.index;
        g.baked = baked;
        if (!baked.empty()) out_.notes.push_back("part '" + name + "': its placement's " + baked + " is baked into geometry " + g.id);
    }
    part.geometry = it->second;
    ++out_.geometries[it->second].instances;
    out_.parts.push_back(std::move(part));
}

const AssemblyPart& Assembly::select(const std::string& selector, const std::string& where) const {
    auto listing = [&] {
        std::string names;
        for (std::size_t i = 0; i < parts.size() && i < 8; ++i) names += (i ? ", " : "") + parts[i].name;
        if (parts.size() > 8) names += ", ...";
        return " (" + std::to_string(parts.size()) + " parts: " + names + "; haptic-dump FILE --parts lists them)";
    };
    if (!selector.empty() && selector[0] == '@') {
        char* end = nullptr;
        const unsigned long long g = std::strtoull(selector.c_str() + 1, &end, 10);
        if (selector.size() > 1 && *end == 0 && g < geometries.size()) return parts[geometries[g].first_part];
        fail_input(where, "no geometry '" + selector + "' (the file has " + std::to_string(geometries.size()) +
                              " geometries, @0 to @" + std::to_string(geometries.size() - 1) + ")");
    }
    for (const AssemblyPart& p : parts)
        if (p.name == selector) return p;
    if (!selector.empty() && std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const unsigned long long i = std::strtoull(selector.c_str(), nullptr, 10);
        if (selector.size() < 19 && i < parts.size()) return parts[i];
    }
    fail_input(where, "no part '" + selector + "'" + listing());
}

Assembly read_assembly(const std::filesystem::path& path, const MeshLoadOptions& options) {
    const std::string where = path.string();
    if (!(options.scale > 0) || !std::isfinite(options.scale)) fail_usage("the scale must be a positive number");
    if (is_cad_file(path)) return read_cad_assembly(path, options);
    const ImportedFile file = import_file(path);
    Assembly out;
    out.source_name = path.filename().string();
    out.source_hash = hex64(hash64(file.bytes.data(), file.bytes.size()));
    out.units = options.units.empty() ? "" : "m";
    out.factor = unit_factor(options.units) * options.scale;
    if (file.obj) {
        AssemblyBuilder builder(out, where);
        add_obj_parts(*file.obj, builder);
    } else if (file.scene->mRootNode) {
        AssemblyBuilder builder(out, where);
        Walker walker{file.scene, where, builder, {}, {}};
        const aiNode* root = file.scene->mRootNode;
        walker.visit(root, aiMatrix4x4(), "", 0);
    }
    if (out.parts.empty()) fail_input(where, "no triangles found (no part of the file holds faces)");
    return out;
}

LoadedMesh prepare_geometry(const Assembly& assembly, std::size_t g, const MeshLoadOptions& options,
                            const std::string& where) {
    const AssemblyGeometry& geometry = assembly.geometries.at(g);
    LoadedMesh m = prepare_mesh(geometry.soup, options, where);
    m.diagnostics.dropped_primitives = assembly.parts[geometry.first_part].dropped_primitives;
    m.source_name = assembly.source_name;
    m.source_hash = assembly.source_hash;
    m.part = "@" + std::to_string(g);
    m.part_name = assembly.parts[geometry.first_part].name;
    if (assembly.units == "m") m.units = "m";  // STEP/IGES: metres whether --units is given or not
    m.tessellation = assembly.tessellation;
    m.notes = assembly.notes;
    return m;
}

namespace {
nlohmann::json vec_json(const Vec3d& v) { return nlohmann::json::array({v.x, v.y, v.z}); }

double surface_area(const TriMesh& m) {
    double a = 0;
    for (const auto& t : m.triangles)
        a += 0.5 * length(cross(m.vertices[t[1]] - m.vertices[t[0]], m.vertices[t[2]] - m.vertices[t[0]]));
    return a;
}

// STEP/IGES: the tessellation's area and volume next to the exact ones, in output units.
struct Measures {
    double area = 0, volume = 0, exact_area = -1, exact_volume = -1;
};
Measures measures(const Assembly& assembly, std::size_t g, const LoadedMesh& m) {
    const AssemblyGeometry& geometry = assembly.geometries[g];
    const double f = assembly.factor;
    Measures r{surface_area(m.mesh), m.diagnostics.signed_volume, -1, -1};
    if (geometry.exact_area >= 0) r.exact_area = geometry.exact_area * f * f;
    if (geometry.exact_volume >= 0) r.exact_volume = geometry.exact_volume * f * f * f;
    return r;
}

nlohmann::json tessellation_json(const Tessellation& t) {
    return {{"format", t.format}, {"linear_deflection", t.linear_deflection}, {"angular_deflection", t.angular_deflection},
            {"file_unit", t.file_unit}, {"seconds_read", t.seconds_read}, {"seconds_mesh", t.seconds_mesh}};
}
nlohmann::json box_json(const Aabb& b) { return {{"min", vec_json(b.min)}, {"max", vec_json(b.max)}}; }
}  // namespace

nlohmann::json parts_json(const Assembly& assembly, const std::vector<LoadedMesh>& prepared) {
    nlohmann::json parts = nlohmann::json::array(), geometries = nlohmann::json::array();
    for (const AssemblyPart& p : assembly.parts) {
        const AssemblyGeometry& g = assembly.geometries[p.geometry];
        const LoadedMesh& m = prepared.at(p.geometry);
        parts.push_back({{"name", p.name},
                         {"index", p.index},
                         {"geometry", g.id},
                         {"instances", g.instances},
                         {"triangles", m.diagnostics.triangles},
                         {"position", vec_json(p.placement.position)},
                         {"quaternion", p.placement.quaternion},
                         {"matrix", p.placement.matrix},
                         {"local_bounds", box_json(m.diagnostics.bbox)},
                         {"world_bounds", box_json(world_bounds(m.diagnostics.bbox, p.placement))}});
    }
    for (std::size_t i = 0; i < assembly.geometries.size(); ++i) {
        const AssemblyGeometry& g = assembly.geometries[i];
        geometries.push_back({{"id", g.id},
                              {"first_part", assembly.parts[g.first_part].name},
                              {"instances", g.instances},
                              {"triangles", prepared.at(i).diagnostics.triangles},
                              {"watertight", prepared.at(i).diagnostics.watertight},
                              {"baked", g.baked}});
        if (assembly.tessellation.linear_deflection > 0) {
            const Measures ms = measures(assembly, i, prepared.at(i));
            auto& j = geometries.back();
            j["area"] = ms.area;
            j["volume"] = ms.volume;
            j["exact_area"] = ms.exact_area >= 0 ? nlohmann::json(ms.exact_area) : nlohmann::json();
            j["exact_volume"] = ms.exact_volume >= 0 ? nlohmann::json(ms.exact_volume) : nlohmann::json();
        }
    }
    nlohmann::json out{{"parts", parts}, {"geometries", geometries}, {"notes", assembly.notes}};
    if (assembly.tessellation.linear_deflection > 0) out["tessellation"] = tessellation_json(assembly.tessellation);
    return out;
}

std::string format_parts(const Assembly& assembly, const std::vector<LoadedMesh>& prepared) {
    std::ostringstream o;
    char buf[512];
    std::snprintf(buf, sizeof buf, "parts        %zu (%zu distinct geometr%s)\n", assembly.parts.size(),
                  assembly.geometries.size(), assembly.geometries.size() == 1 ? "y" : "ies");
    o << buf;
    for (const AssemblyPart& p : assembly.parts) {
        const AssemblyGeometry& g = assembly.geometries[p.geometry];
        const LoadedMesh& m = prepared.at(p.geometry);
        const Aabb w = world_bounds(m.diagnostics.bbox, p.placement);
        const auto& q = p.placement.quaternion;
        std::snprintf(buf, sizeof buf,
                      "  %-4zu %s\n       geometry %s (%zu instance%s), %s triangles\n       position [%.6g, %.6g, %.6g]  "
                      "quaternion [%.6g, %.6g, %.6g, %.6g]\n       world [%.6g, %.6g, %.6g] .. [%.6g, %.6g, %.6g]\n",
                      p.index, p.name.c_str(), g.id.c_str(), g.instances, g.instances == 1 ? "" : "s",
                      with_commas(m.diagnostics.triangles).c_str(), p.placement.position.x, p.placement.position.y,
                      p.placement.position.z, q[0], q[1], q[2], q[3], w.min.x, w.min.y, w.min.z, w.max.x, w.max.y,
                      w.max.z);
        o << buf;
        if (assembly.tessellation.linear_deflection > 0) {
            const Measures ms = measures(assembly, p.geometry, m);
            char area[32] = "unknown", volume[32] = "none: no solid";
            if (ms.exact_area >= 0) std::snprintf(area, sizeof area, "%.6g", ms.exact_area);
            if (ms.exact_volume >= 0) std::snprintf(volume, sizeof volume, "%.6g", ms.exact_volume);
            std::snprintf(buf, sizeof buf, "       area %.6g (exact %s), volume %.6g (exact %s)\n", ms.area, area,
                          ms.volume, volume);
            o << buf;
        }
    }
    if (assembly.tessellation.linear_deflection > 0) {
        const Tessellation& t = assembly.tessellation;
        std::snprintf(buf, sizeof buf,
                      "tessellation %s in %s: linear deflection %.6g, angular %.6g rad; read %.3f s, meshed %.3f s\n",
                      t.format == "iges" ? "IGES" : "STEP", t.file_unit.c_str(), t.linear_deflection, t.angular_deflection,
                      t.seconds_read, t.seconds_mesh);
        o << buf;
    }
    for (const std::string& n : assembly.notes) o << "note         " << n << "\n";
    return o.str();
}

}  // namespace hp
