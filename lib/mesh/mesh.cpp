#include "mesh/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <system_error>
#include <unordered_map>

#include <assimp/scene.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/text.hpp"
#include "mesh/assembly.hpp"
#include "mesh/cad.hpp"
#include "mesh/import.hpp"
#include "mesh/orient.hpp"

namespace hp {

Aabb TriMesh::bounds() const {
    Aabb b;
    for (const Vec3d& v : vertices) b.extend(v);
    return b;
}

double unit_factor(const std::string& units) {
    if (units.empty() || units == "m") return 1.0;
    if (units == "mm") return 0.001;
    if (units == "cm") return 0.01;
    if (units == "in") return 0.0254;
    fail_usage("unknown unit '" + units + "' (use mm, cm, m or in)");
}

namespace {

// A vertex placed by a node transform, in double precision.
Vec3d place(const aiMatrix4x4& m, float px, float py, float pz) {
    const double x = px, y = py, z = pz;
    return {m.a1 * x + m.a2 * y + m.a3 * z + m.a4, m.b1 * x + m.b2 * y + m.b3 * z + m.b4,
            m.c1 * x + m.c2 * y + m.c3 * z + m.c4};
}

// Appends the triangles of `node` and its children, with the accumulated transform applied in
// double precision. Faces that are not triangles after aiProcess_Triangulate are points/lines.
void collect(const aiScene* scene, const aiNode* node, const aiMatrix4x4& parent, TriMesh& soup,
             std::size_t& dropped_primitives, int depth) {
    if (depth > 1000) return;  // a cyclic or absurdly deep node graph in a broken file
    aiMatrix4x4 m = parent * node->mTransformation;
    for (unsigned mi = 0; mi < node->mNumMeshes; ++mi) {
        if (node->mMeshes[mi] >= scene->mNumMeshes) continue;
        const aiMesh* mesh = scene->mMeshes[node->mMeshes[mi]];
        if (!mesh || !mesh->mVertices) continue;
        const std::uint32_t base = static_cast<std::uint32_t>(soup.vertices.size());
        for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
            const aiVector3D& p = mesh->mVertices[v];
            soup.vertices.push_back(place(m, p.x, p.y, p.z));
        }
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
            const aiFace& face = mesh->mFaces[f];
            if (face.mNumIndices != 3 || !face.mIndices) {
                ++dropped_primitives;
                continue;
            }
            std::array<std::uint32_t, 3> t{};
            bool valid = true;
            for (int c = 0; c < 3; ++c) {
                if (face.mIndices[c] >= mesh->mNumVertices) valid = false;
                t[static_cast<std::size_t>(c)] = base + face.mIndices[c];
            }
            if (valid) soup.triangles.push_back(t);
            else ++dropped_primitives;
        }
    }
    for (unsigned c = 0; c < node->mNumChildren; ++c)
        if (node->mChildren[c]) collect(scene, node->mChildren[c], m, soup, dropped_primitives, depth + 1);
}

// The triangles of a natively read OBJ file (mesh/obj_native.hpp) as collect() gathers Assimp's
// scene of it: the nodes in order, each mesh's corners then its triangles, placed by the identity
// (the product of the root's and the node's transforms) in the same arithmetic.
void collect_obj(const ObjScene& obj, TriMesh& soup) {
    const aiMatrix4x4 m = aiMatrix4x4() * aiMatrix4x4();
    std::size_t corners = 0, triangles = 0;
    for (const ObjMesh& mesh : obj.meshes) {
        corners += mesh.corners.size();
        triangles += mesh.triangles.size();
    }
    soup.vertices.reserve(corners);
    soup.triangles.reserve(triangles);
    const auto placed = [&](float x, float y, float z) { return place(m, x, y, z); };
    for (const ObjNode& node : obj.nodes)
        for (std::uint32_t mi : node.meshes) append_obj_mesh(obj, obj.meshes[mi], soup, placed);
}

// Union-find with path halving, for connected components.
struct DisjointSets {
    std::vector<std::uint32_t> parent;
    explicit DisjointSets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
    std::uint32_t find(std::uint32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    void unite(std::uint32_t a, std::uint32_t b) {
        a = find(a);
        b = find(b);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
};


}  // namespace

int internal_edge_kind(const TriMesh& mesh, std::uint32_t t0, std::uint32_t t1, std::uint32_t v0, std::uint32_t v1) {
    const auto& f0 = mesh.triangles[t0];
    const auto& f1 = mesh.triangles[t1];
    std::uint32_t far = f1[0];
    for (std::uint32_t v : f1)
        if (v != v0 && v != v1) far = v;
    const Vec3d p0 = mesh.vertices[v0];
    const Vec3d n0 = normalized(cross(mesh.vertices[f0[1]] - mesh.vertices[f0[0]], mesh.vertices[f0[2]] - mesh.vertices[f0[0]]));
    const Vec3d q = mesh.vertices[far];
    const double s = dot(n0, q - p0);
    const double tol = 1e-9 * (length(q - p0) + length(mesh.vertices[v1] - p0));
    return s > tol ? 2 : (s >= -tol ? 1 : 0);
}

MeshDiagnostics diagnose(const TriMesh& mesh) {
    MeshDiagnostics d;
    d.vertices = mesh.vertices.size();
    d.triangles = mesh.triangles.size();
    d.bbox = mesh.bounds();

    // Directed edges sorted by their undirected key: (min, max, forward?).
    struct Edge {
        std::uint32_t lo, hi;
        bool forward;  // traversed lo -> hi
        std::uint32_t tri;
    };
    std::vector<Edge> edges;
    edges.reserve(mesh.triangles.size() * 3);
    for (std::uint32_t ti = 0; ti < mesh.triangles.size(); ++ti) {
        const auto& t = mesh.triangles[ti];
        for (int c = 0; c < 3; ++c) {
            std::uint32_t a = t[static_cast<std::size_t>(c)], b = t[static_cast<std::size_t>((c + 1) % 3)];
            edges.push_back({std::min(a, b), std::max(a, b), a < b, ti});
        }
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
        return x.lo != y.lo ? x.lo < y.lo : (x.hi != y.hi ? x.hi < y.hi : x.forward < y.forward);
    });
    for (std::size_t i = 0; i < edges.size();) {
        std::size_t j = i;
        while (j < edges.size() && edges[j].lo == edges[i].lo && edges[j].hi == edges[i].hi) ++j;
        std::size_t uses = j - i;
        ++d.edges;
        if (uses == 1) ++d.boundary_edges;
        else if (uses > 2) ++d.nonmanifold_edges;
        else if (edges[i].forward == edges[i + 1].forward) ++d.inconsistent_edges;
        else {
            const int kind = internal_edge_kind(mesh, edges[i].tri, edges[i + 1].tri, edges[i].lo, edges[i].hi);
            d.internal_edges += kind > 0;
            d.concave_edges += kind == 2;
        }
        i = j;
    }

    // Components through shared vertices; signed volume per component (centred coordinates keep
    // the triple products well conditioned far from the origin).
    DisjointSets sets(mesh.vertices.size());
    for (const auto& t : mesh.triangles) {
        sets.unite(t[0], t[1]);
        sets.unite(t[1], t[2]);
    }
    Vec3d c = d.bbox.center();
    std::unordered_map<std::uint32_t, double> volume_of;
    for (const auto& t : mesh.triangles) {
        double v = dot(mesh.vertices[t[0]] - c, cross(mesh.vertices[t[1]] - c, mesh.vertices[t[2]] - c)) / 6.0;
        volume_of[sets.find(t[0])] += v;
        d.signed_volume += v;
    }
    d.components = volume_of.size();
    d.watertight = d.triangles > 0 && d.boundary_edges == 0 && d.nonmanifold_edges == 0 && d.inconsistent_edges == 0;
    bool any_pos = false, any_neg = false;
    for (const auto& [root, v] : volume_of) {
        (void)root;
        if (v > 0) any_pos = true;
        if (v < 0) any_neg = true;
    }
    if (d.inconsistent_edges > 0 || (any_pos && any_neg)) d.orientation = "mixed";
    else d.orientation = any_neg ? "inward" : "outward";
    return d;
}

LoadedMesh prepare_mesh(TriMesh soup, const MeshLoadOptions& options, const std::string& where) {
    const double factor = unit_factor(options.units) * options.scale;
    if (!(options.scale > 0) || !std::isfinite(options.scale))
        fail_usage("the scale must be a positive number");
    for (std::size_t i = 0; i < soup.vertices.size(); ++i) {
#ifdef HP_FUZZ_CANARY
        // The fuzzing canary of mesh_obj and mesh_stl (docs/fuzzing.md): the check below left out.
        if (!is_finite(soup.vertices[i])) __builtin_trap();
#endif
        if (!is_finite(soup.vertices[i]))
            fail_input(where, "vertex " + std::to_string(i) + " has a NaN or infinite coordinate (repair the export)");
        soup.vertices[i] *= factor;
    }
    std::size_t input_vertices = soup.vertices.size();

    // Keep only vertices that triangles use.
    if (soup.triangles.empty()) fail_input(where, "no triangles found (the file holds only points, lines or nothing)");

    Aabb box;
    for (const auto& t : soup.triangles)
        for (std::uint32_t v : t) box.extend(soup.vertices[v]);
    const double diag = box.diagonal();
    if (!std::isfinite(diag)) fail_input(where, "coordinates overflow after scaling (check the scale and the units)");

    // Weld by position: vertices within tol of an earlier kept vertex map onto it. A hash grid of
    // cell size tol finds candidates in the 27 cells around a vertex; the first vertex in file
    // order wins, so the result is deterministic.
    const double tol = options.weld_tolerance * diag;
    std::vector<std::uint32_t> remap(soup.vertices.size(), UINT32_MAX);
    std::vector<char> used(soup.vertices.size(), 0);
    for (const auto& t : soup.triangles)
        for (std::uint32_t v : t) used[v] = 1;
    TriMesh out;
    auto cell_of = [&](const Vec3d& p, int a) {
        return tol > 0 ? static_cast<std::int64_t>(std::floor((p[a] - box.min[a]) / tol)) : 0;
    };
    auto key = [](std::int64_t x, std::int64_t y, std::int64_t z) {
        return static_cast<std::uint64_t>(x) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(y) * 0xC2B2AE3D27D4EB4FULL ^
               static_cast<std::uint64_t>(z) * 0x165667B19E3779F9ULL;
    };
    std::unordered_multimap<std::uint64_t, std::uint32_t> grid;
    grid.reserve(soup.vertices.size());
    for (std::size_t i = 0; i < soup.vertices.size(); ++i) {
        if (!used[i]) continue;
        const Vec3d& p = soup.vertices[i];
        std::int64_t cx = cell_of(p, 0), cy = cell_of(p, 1), cz = cell_of(p, 2);
        std::uint32_t found = UINT32_MAX;
        for (int dz = -1; dz <= 1 && found == UINT32_MAX; ++dz)
            for (int dy = -1; dy <= 1 && found == UINT32_MAX; ++dy)
                for (int dx = -1; dx <= 1 && found == UINT32_MAX; ++dx) {
                    auto range = grid.equal_range(key(cx + dx, cy + dy, cz + dz));
                    for (auto it = range.first; it != range.second; ++it) {
                        const Vec3d& q = out.vertices[it->second];
                        if (length2(q - p) <= tol * tol &&
                            cell_of(q, 0) == cx + dx && cell_of(q, 1) == cy + dy && cell_of(q, 2) == cz + dz &&
                            (found == UINT32_MAX || it->second < found))
                            found = it->second;
                    }
                }
        if (found == UINT32_MAX) {
            found = static_cast<std::uint32_t>(out.vertices.size());
            out.vertices.push_back(p);
            grid.emplace(key(cx, cy, cz), found);
        }
        remap[i] = found;
    }

    LoadedMesh result;
    MeshDiagnostics& d = result.diagnostics;
    // Degenerate (a repeated vertex after welding, or exactly zero area) and duplicate triangles
    // (the same three vertices in any order, so a face repeated with the opposite winding counts
    // as a duplicate too: the first one in file order stays).
    std::unordered_map<std::uint64_t, std::vector<std::array<std::uint32_t, 3>>> seen;
    seen.reserve(soup.triangles.size());
    for (const auto& t0 : soup.triangles) {
        std::array<std::uint32_t, 3> t{remap[t0[0]], remap[t0[1]], remap[t0[2]]};
        if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2] ||
            length2(cross(out.vertices[t[1]] - out.vertices[t[0]], out.vertices[t[2]] - out.vertices[t[0]])) == 0) {
            ++d.dropped_degenerate;
            continue;
        }
        std::array<std::uint32_t, 3> s = t;
        std::sort(s.begin(), s.end());
        std::uint64_t h = hash64(s.data(), sizeof s);
        auto& bucket = seen[h];
        if (std::find(bucket.begin(), bucket.end(), s) != bucket.end()) {
            ++d.dropped_duplicate;
            continue;
        }
        bucket.push_back(s);
        out.triangles.push_back(t);
    }
    if (out.triangles.empty())
        fail_input(where, "no triangles left: every triangle is degenerate (zero area) or a duplicate");

    // Drop vertices that only degenerate triangles used, keeping the order.
    std::vector<std::uint32_t> compact(out.vertices.size(), UINT32_MAX);
    TriMesh final_mesh;
    for (auto& t : out.triangles)
        for (std::uint32_t& v : t) {
            if (compact[v] == UINT32_MAX) {
                compact[v] = 0;  // mark
            }
        }
    for (std::size_t v = 0; v < out.vertices.size(); ++v)
        if (compact[v] != UINT32_MAX) {
            compact[v] = static_cast<std::uint32_t>(final_mesh.vertices.size());
            final_mesh.vertices.push_back(out.vertices[v]);
        }
    for (const auto& t : out.triangles) final_mesh.triangles.push_back({compact[t[0]], compact[t[1]], compact[t[2]]});

    OrientationRepair repair;
    if (options.repair_orientation) repair = orient_consistently(final_mesh);
    std::size_t dropped_degenerate = d.dropped_degenerate, dropped_duplicate = d.dropped_duplicate;
    d = diagnose(final_mesh);
    d.flipped_faces = repair.flipped_faces;
    d.non_orientable_parts = repair.non_orientable_parts;
    d.non_manifold_parts = repair.non_manifold_parts;
    // A repaired mesh whose closed parts contain one another has outward shells with inward
    // cavities, which diagnose() alone calls "mixed".
    if (repair.flipped_faces > 0 && d.inconsistent_edges == 0) d.orientation = "repaired";
    d.dropped_degenerate = dropped_degenerate;
    d.dropped_duplicate = dropped_duplicate;
    std::size_t used_count = static_cast<std::size_t>(std::count(used.begin(), used.end(), 1));
    d.welded_vertices = used_count - out.vertices.size();
    (void)input_vertices;
    result.mesh = std::move(final_mesh);
    result.units = options.units.empty() ? "" : "m";
    return result;
}

LoadedMesh load_mesh(const std::filesystem::path& path, const MeshLoadOptions& options) {
    const std::string where = path.string();
    if (!options.part.empty()) {
        const Assembly assembly = read_assembly(path, options);
        const AssemblyPart& part = assembly.select(options.part, where);
        return prepare_geometry(assembly, part.geometry, options, where + ": part '" + part.name + "'");
    }
    if (is_cad_file(path)) {
        // STEP/IGES: every part placed into the world (in the soups' units: prepare_mesh scales).
        const Assembly assembly = read_cad_assembly(path, options);
        TriMesh soup;
        for (const AssemblyPart& p : assembly.parts) {
            const TriMesh& g = assembly.geometries[p.geometry].soup;
            const auto base = static_cast<std::uint32_t>(soup.vertices.size());
            const auto& m = p.placement.matrix;
            const Vec3d t = p.placement.position / assembly.factor;
            for (const Vec3d& v : g.vertices)
                soup.vertices.push_back({m[0] * v.x + m[1] * v.y + m[2] * v.z + t.x, m[4] * v.x + m[5] * v.y + m[6] * v.z + t.y,
                                         m[8] * v.x + m[9] * v.y + m[10] * v.z + t.z});
            for (const auto& tri : g.triangles) soup.triangles.push_back({tri[0] + base, tri[1] + base, tri[2] + base});
        }
        LoadedMesh result = prepare_mesh(std::move(soup), options, where);
        result.source_name = assembly.source_name;
        result.source_hash = assembly.source_hash;
        result.units = assembly.units;
        result.tessellation = assembly.tessellation;
        result.notes = assembly.notes;
        return result;
    }
    const ImportedFile file = import_file(path);
    const aiScene* scene = file.scene;
    TriMesh soup;
    std::size_t dropped_primitives = 0;
    if (file.obj) {
        collect_obj(*file.obj, soup);
    } else if (scene->mRootNode) {
        collect(scene, scene->mRootNode, aiMatrix4x4(), soup, dropped_primitives, 0);
    }
    if (soup.triangles.empty()) {
        std::string what = dropped_primitives > 0 ? "no triangles found (the file holds only points or lines)"
                                                  : "no triangles found (the file holds no faces)";
        fail_input(where, what);
    }
    LoadedMesh result = prepare_mesh(std::move(soup), options, where);
    result.diagnostics.dropped_primitives = dropped_primitives;
    result.source_name = path.filename().string();
    result.source_hash = hex64(hash64(file.bytes.data(), file.bytes.size()));
    return result;
}

nlohmann::json to_json(const MeshDiagnostics& d) {
    auto vec = [](const Vec3d& v) { return nlohmann::json::array({v.x, v.y, v.z}); };
    return {
        {"vertices", d.vertices},
        {"triangles", d.triangles},
        {"bbox", {{"min", vec(d.bbox.min)}, {"max", vec(d.bbox.max)}, {"size", vec(d.bbox.max - d.bbox.min)}}},
        {"boundary_edges", d.boundary_edges},
        {"nonmanifold_edges", d.nonmanifold_edges},
        {"inconsistent_edges", d.inconsistent_edges},
        {"components", d.components},
        {"signed_volume", d.signed_volume},
        {"watertight", d.watertight},
        {"orientation", d.orientation},
        {"flipped_faces", d.flipped_faces},
        {"non_orientable_parts", d.non_orientable_parts},
        {"non_manifold_parts", d.non_manifold_parts},
        {"welded_vertices", d.welded_vertices},
        {"dropped_degenerate", d.dropped_degenerate},
        {"dropped_duplicate", d.dropped_duplicate},
        {"dropped_primitives", d.dropped_primitives},
        {"edges", d.edges},
        {"internal_edges", d.internal_edges},
        {"internal_edge_share", d.edges ? static_cast<double>(d.internal_edges) / static_cast<double>(d.edges) : 0.0},
        {"concave_edges", d.concave_edges},
    };
}

std::string format_diagnostics(const MeshDiagnostics& d) {
    std::ostringstream o;
    char buf[256];
    Vec3d size = d.bbox.size();
    o << "vertices     " << with_commas(d.vertices) << " (" << with_commas(d.welded_vertices) << " welded away)\n";
    o << "triangles    " << with_commas(d.triangles) << " (dropped " << d.dropped_degenerate << " degenerate, "
      << d.dropped_duplicate << " duplicate, " << d.dropped_primitives << " points/lines)\n";
    std::snprintf(buf, sizeof buf, "bbox         [%.6g, %.6g, %.6g] .. [%.6g, %.6g, %.6g]  size %.6g x %.6g x %.6g\n",
                  d.bbox.min.x, d.bbox.min.y, d.bbox.min.z, d.bbox.max.x, d.bbox.max.y, d.bbox.max.z, size.x, size.y,
                  size.z);
    o << buf;
    o << "edges        " << d.boundary_edges << " boundary, " << d.nonmanifold_edges << " non-manifold, "
      << d.inconsistent_edges << " inconsistently oriented\n";
    std::snprintf(buf, sizeof buf, "internal     %zu of %zu edges (%.1f%%: %zu concave, %zu flat), never touched first\n",
                  d.internal_edges, d.edges, d.edges ? 100.0 * static_cast<double>(d.internal_edges) / static_cast<double>(d.edges) : 0.0,
                  d.concave_edges, d.internal_edges - d.concave_edges);
    o << buf;
    o << "components   " << d.components << "\n";
    std::snprintf(buf, sizeof buf, "volume       %.6g (signed)\n", d.signed_volume);
    o << buf;
    o << "watertight   " << (d.watertight ? "yes" : "no") << "\n";
    o << "orientation  " << d.orientation;
    if (d.flipped_faces > 0) o << " (" << with_commas(d.flipped_faces) << " faces flipped at import)";
    if (d.non_orientable_parts + d.non_manifold_parts > 0)
        o << "; kept as they were: " << d.non_orientable_parts << " non-orientable, " << d.non_manifold_parts
          << " non-manifold parts";
    o << "\n";
    return o.str();
}

std::string check_source_hash(const std::string& mesh, const std::string& mesh_hash, const std::string& file,
                              const std::string& file_kind, const std::string& recorded, bool force,
                              const std::string& force_name) {
    if (recorded == mesh_hash) return "";
    const std::string what = mesh + ": not the mesh " + file + " was made from (hash " + mesh_hash + ", the " + file_kind +
                             " records " + (recorded.empty() ? std::string("none") : recorded) + ")";
    if (!force) fail_input("", what + "; use " + force_name + " to proceed anyway");
    return what + "; proceeding (" + force_name + ")";
}

}  // namespace hp
