// The Python package's files (module hapticprep._hapticprep, hapticprep_module.cpp): the loaded
// objects of each file kind as numpy arrays, through the library's own readers (formats/*,
// lib/inspect), and their classes. Voxel grids are indexed [i, j, k] (x first, Fortran order: the
// file's dense layout without a copy of the order). docs/python.md.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cfm/cfm.hpp"
#include "common.hpp"
#include "core/error.hpp"
#include "formats/cfm.hpp"
#include "formats/container.hpp"
#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "inspect/inspect.hpp"
#include "inspect/tree.hpp"
#include "mesh/mesh.hpp"
#include "spheretree/tree.hpp"

namespace hp::python {

namespace fs = std::filesystem;

namespace {

// A dense grid array over `grid` (x fastest in memory), shape (nx, ny, nz[, comps]), Fortran
// order for the voxel axes: a[i, j, k] is voxel (i, j, k).
template <class T>
py::array_t<T> grid_array(const hp::GridSpec& grid, int comps) {
    std::vector<py::ssize_t> shape{grid.dims[0], grid.dims[1], grid.dims[2]};
    const auto sz = static_cast<py::ssize_t>(sizeof(T));
    std::vector<py::ssize_t> strides{sz * comps, sz * comps * grid.dims[0],
                                     sz * comps * grid.dims[0] * grid.dims[1]};
    if (comps > 1) {
        shape.push_back(comps);
        strides.push_back(sz);
    }
    return py::array_t<T>(shape, strides);
}

// Reads grid `name` of an open reader into a grid array of T (the grid's own value type).
template <class T>
py::array_t<T> read_grid(const hp::vdb::Reader& reader, const std::string& name, hp::vdb::ValueType type, int comps) {
    const hp::GridSpec& g = reader.info().grid;
    py::array_t<T> a = grid_array<T>(g, comps);
    T* out = a.mutable_data();
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]) *
                              static_cast<std::size_t>(comps);
    {
        py::gil_scoped_release release;
        reader.read_slices(name, type, [&](int z, const void* values) {
            std::memcpy(out + static_cast<std::size_t>(z) * slice, values, slice * sizeof(T));
        });
    }
    return a;
}

// ---- Python-side objects -----------------------------------------------------------------------

struct Grid {
    hp::GridSpec spec;
    py::tuple origin() const { return py::make_tuple(spec.origin.x, spec.origin.y, spec.origin.z); }
    py::tuple dims() const { return py::make_tuple(spec.dims[0], spec.dims[1], spec.dims[2]); }
    // World coordinates of the voxel centres along axis a (0, 1, 2).
    py::array_t<double> centers(int axis) const {
        if (axis < 0 || axis > 2) throw py::value_error("axis must be 0, 1 or 2");
        py::array_t<double> a(spec.dims[axis]);
        auto m = a.mutable_unchecked<1>();
        for (int i = 0; i < spec.dims[axis]; ++i) m(i) = spec.origin[axis] + (i + 0.5) * spec.voxel_size;
        return a;
    }
};

struct VdbCommon {
    std::string path, kind, creator, checksum;
    Grid grid;
    py::object metadata, grids;
};

struct Voxelmap : VdbCommon {
    py::object layers;
};

struct DistanceField : VdbCommon {
    std::string encoding;
    double scale_factor = 1;
    py::object distance, stored, layers, gradient;
};

struct Shell {
    std::string path, kind;
    py::object metadata, points, normals, triangles;
};

struct Tree : Shell {
    int k = 0, levels = 0;
    py::object thresholds, level, center, radius, parent, children, children_start, cluster_points,
        cluster_points_start, level_stats;
};

struct Cfm {
    std::string path, sampling, store;
    int root_stacks = 0, min_stacks = 0, levels = 0;
    std::size_t file_size = 0;
    py::object metadata, cluster, level, center, radius, stacks, single_feature, first, count, normals, types,
        features, points;
    hp::cfm::ClosestFeatureMap map;  // for directions() and lookup()
};

struct Mesh {
    std::string path, source_name, source_hash, units;
    py::object vertices, triangles, diagnostics;
};

void fill_vdb(VdbCommon& out, const hp::vdb::Reader& reader, const fs::path& path) {
    const hp::vdb::FileInfo& info = reader.info();
    out.path = path.string();
    out.kind = info.metadata.value("kind", "");
    out.creator = info.creator;
    out.checksum = info.checksum;
    out.grid.spec = info.grid;
    // OpenVDB metadata holds no objects or arrays: the writer stores them as JSON text (parameters,
    // grid); they are parsed back here, as haptic-dump shows them.
    nlohmann::json meta = info.metadata;
    for (auto& [key, value] : meta.items()) {
        if (!value.is_string()) continue;
        const std::string& text = value.get_ref<const std::string&>();
        if (text.empty() || (text.front() != '{' && text.front() != '[')) continue;
        nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
        if (!parsed.is_discarded()) value = std::move(parsed);
    }
    out.metadata = to_python(meta);
    py::list grids;
    for (const hp::vdb::GridInfo& g : info.grids) {
        py::dict d;
        d["name"] = g.name;
        d["value_type"] = g.value_type;
        d["grid_class"] = g.grid_class;
        d["active_voxels"] = g.active_voxels;
        grids.append(d);
    }
    out.grids = grids;
}

// Opens a file of ours of one kind ("voxelmap", "distance"); `label` names it in messages.
hp::vdb::Reader open_ours(const fs::path& path, const char* expected_kind, const char* label, const char* make_with) {
    std::optional<hp::vdb::Reader> reader;
    {
        py::gil_scoped_release release;
        reader.emplace(hp::vdb::Reader::open(path));
    }
    const std::string name = path.string();
    if (!reader->info().ours)
        hp::fail_input(name, std::string("is not a hapticprep ") + label + " (no haptic: metadata); make one with " + make_with);
    const std::string kind = reader->info().metadata.value("kind", "");
    if (kind != expected_kind)
        hp::fail_input(name, "is a '" + kind + "' file, not a " + label + " (make one with " + make_with + ")");
    return std::move(*reader);
}

Voxelmap load_voxelmap(const py::object& p) {
    const fs::path path = to_path(p);
    const hp::vdb::Reader reader = open_ours(path, "voxelmap", "voxelmap", "haptic-voxelize");
    Voxelmap out;
    fill_vdb(out, reader, path);
    out.layers = read_grid<std::int32_t>(reader, "layers", hp::vdb::ValueType::int32, 1);
    return out;
}

DistanceField load_distance(const py::object& p, bool gradient) {
    const fs::path path = to_path(p);
    const hp::vdb::Reader reader = open_ours(path, "distance", "distance field", "haptic-distance");
    DistanceField out;
    fill_vdb(out, reader, path);
    const nlohmann::json& meta = reader.info().metadata;
    out.encoding = vdb::distance_encoding_text(meta);
    out.scale_factor = meta.value("scale_factor", 1.0);
    std::vector<double> distance;
    {
        py::gil_scoped_release release;
        distance = reader.read_distance();  // world units in every encoding (the query's values)
    }
    py::array_t<double> d = grid_array<double>(reader.info().grid, 1);
    std::memcpy(d.mutable_data(), distance.data(), distance.size() * sizeof(double));
    out.distance = d;
    // The stored values in the grid's own type (read_distance checked it against the encoding).
    const std::string type = reader.value_type("distance");
    if (type == "float")
        out.stored = read_grid<float>(reader, "distance", hp::vdb::ValueType::float32, 1);
    else if (type == "double")
        out.stored = read_grid<double>(reader, "distance", hp::vdb::ValueType::float64, 1);
    else
        out.stored = read_grid<std::int32_t>(reader, "distance", hp::vdb::ValueType::int32, 1);
    out.layers = reader.value_type("layers").empty()
                     ? py::object(py::none())
                     : py::object(read_grid<std::int32_t>(reader, "layers", hp::vdb::ValueType::int32, 1));
    out.gradient = py::none();
    if (gradient && !reader.value_type("gradient").empty())
        out.gradient = read_grid<float>(reader, "gradient", hp::vdb::ValueType::vec3f, 3);
    return out;
}

void fill_shell(Shell& out, const hp::ShellFile& f, const fs::path& path) {
    out.path = path.string();
    out.kind = hp::container::kind_name(f.kind);
    out.metadata = to_python(f.metadata);
    out.points = vec3_array(f.shell.points);
    out.normals = vec3_array(f.shell.normals);
    out.triangles = vector_array(f.shell.triangles);
}

hp::ShellFile read_shell(const fs::path& path, bool require_tree) {
    py::gil_scoped_release release;
    return hp::read_shell_file(path, require_tree);
}

Shell load_pointshell(const py::object& p) {
    const fs::path path = to_path(p);
    Shell out;
    fill_shell(out, read_shell(path, false), path);
    return out;
}

Tree tree_from(const hp::ShellFile& f, const fs::path& path) {
    Tree out;
    fill_shell(out, f, path);
    const hp::PointSphereTree& t = *f.tree;
    out.k = t.k;
    out.levels = t.levels;
    out.thresholds = vector_array(t.thresholds);
    const std::size_t n = t.clusters.size();
    std::vector<std::int32_t> level(n), parent(n);
    std::vector<double> radius(n);
    std::vector<hp::Vec3d> center(n);
    std::vector<std::uint32_t> children, children_start{0}, members, members_start{0};
    for (std::size_t c = 0; c < n; ++c) {
        const hp::TreeCluster& cl = t.clusters[c];
        level[c] = cl.level;
        parent[c] = cl.parent;
        center[c] = cl.sphere.center;
        radius[c] = cl.sphere.radius;
        children.insert(children.end(), cl.children.begin(), cl.children.end());
        children_start.push_back(static_cast<std::uint32_t>(children.size()));
        members.insert(members.end(), cl.points.begin(), cl.points.end());
        members_start.push_back(static_cast<std::uint32_t>(members.size()));
    }
    out.level = vector_array(level);
    out.parent = vector_array(parent);
    out.center = vec3_array(center);
    out.radius = vector_array(radius);
    out.children = vector_array(children);
    out.children_start = vector_array(children_start);
    out.cluster_points = vector_array(members);
    out.cluster_points_start = vector_array(members_start);
    out.level_stats = to_python(hp::inspect::tree_levels_json(t, hp::level_statistics(t)))["per_level"];
    return out;
}

Tree load_tree(const py::object& p) {
    const fs::path path = to_path(p);
    return tree_from(read_shell(path, true), path);
}

Cfm load_cfm(const py::object& p) {
    const fs::path path = to_path(p);
    std::optional<hp::CfmFile> f;
    {
        py::gil_scoped_release release;
        f.emplace(hp::read_cfm_file(path));
    }
    const hp::cfm::ClosestFeatureMap& m = f->map;
    Cfm out;
    out.path = path.string();
    out.metadata = to_python(f->metadata);
    out.file_size = f->file_size;
    out.sampling = hp::cfm::sampling_name(m.sampling);
    out.store = hp::cfm::store_name(m.store);
    out.root_stacks = m.root_stacks;
    out.min_stacks = m.min_stacks;
    out.levels = m.levels;
    const std::size_t s = m.spheres.size();
    std::vector<std::uint32_t> cluster(s), first(s), count(s);
    std::vector<std::int32_t> level(s), stacks(s);
    std::vector<double> radius(s);
    std::vector<hp::Vec3d> center(s);
    py::array_t<bool> single(static_cast<py::ssize_t>(s));
    auto single_m = single.mutable_unchecked<1>();
    for (std::size_t i = 0; i < s; ++i) {
        const hp::cfm::Sphere& sp = m.spheres[i];
        cluster[i] = sp.cluster;
        level[i] = sp.level;
        center[i] = sp.center;
        radius[i] = sp.radius;
        stacks[i] = sp.stacks;
        single_m(static_cast<py::ssize_t>(i)) = sp.single_feature;
        first[i] = sp.first;
        count[i] = sp.count;
    }
    out.cluster = vector_array(cluster);
    out.level = vector_array(level);
    out.center = vec3_array(center);
    out.radius = vector_array(radius);
    out.stacks = vector_array(stacks);
    out.single_feature = single;
    out.first = vector_array(first);
    out.count = vector_array(count);
    py::array_t<float> normals({static_cast<py::ssize_t>(m.normals.size()), py::ssize_t{3}});
    if (!m.normals.empty()) std::memcpy(normals.mutable_data(), m.normals.data(), m.normals.size() * sizeof(float) * 3);
    out.normals = normals;
    if (m.store == hp::cfm::Store::full) {
        std::vector<std::uint8_t> types(m.types.size());
        for (std::size_t i = 0; i < types.size(); ++i) types[i] = static_cast<std::uint8_t>(m.types[i]);
        out.types = vector_array(types);
        out.features = vector_array(m.features);
        out.points = vec3_array(m.points);
    } else {
        out.types = out.features = out.points = py::none();
    }
    out.map = std::move(f->map);
    return out;
}

Mesh load_mesh(const py::object& p, const std::string& units, double scale, bool repair_orientation,
               const std::string& part) {
    const fs::path path = to_path(p);
    std::optional<hp::LoadedMesh> lm;
    {
        py::gil_scoped_release release;
        lm.emplace(hp::load_mesh(path, {.scale = scale, .units = units, .repair_orientation = repair_orientation, .part = part}));
    }
    Mesh out;
    out.path = path.string();
    out.source_name = lm->source_name;
    out.source_hash = lm->source_hash;
    out.units = lm->units;
    out.vertices = vec3_array(lm->mesh.vertices);
    py::array_t<std::uint32_t> tri({static_cast<py::ssize_t>(lm->mesh.triangles.size()), py::ssize_t{3}});
    if (!lm->mesh.triangles.empty())
        std::memcpy(tri.mutable_data(), lm->mesh.triangles.data(), lm->mesh.triangles.size() * sizeof(std::uint32_t) * 3);
    out.triangles = tri;
    out.diagnostics = to_python(hp::to_json(lm->diagnostics));
    return out;
}

// Whatever kind the file is (by content, like haptic-dump): one of the loaded objects above.
py::object load_any(const py::object& p) {
    const fs::path path = to_path(p);
    if (hp::vdb::looks_like_vdb(path)) {
        std::string kind;
        {
            py::gil_scoped_release release;
            kind = hp::vdb::inspect(path).metadata.value("kind", "");
        }
        if (kind == "voxelmap") return py::cast(load_voxelmap(p));
        return py::cast(load_distance(p, true));  // refuses anything else with the reader's message
    }
    if (hp::container::looks_like_container(path)) {
        if (hp::inspect::is_shell_file(path)) {
            hp::ShellFile f = read_shell(path, false);
            if (f.tree) return py::cast(tree_from(f, path));
            Shell out;
            fill_shell(out, f, path);
            return py::cast(std::move(out));
        }
        return py::cast(load_cfm(p));
    }
    return py::cast(load_mesh(p, "", 1.0, true, ""));
}

}  // namespace

void bind_files(py::module_& m) {
    py::class_<Grid>(m, "Grid", "The voxel grid of a VDB file: voxel (i, j, k) has its centre at origin + (ijk + 0.5) voxel_size")
        .def_property_readonly("origin", &Grid::origin, "world position of the minimum corner of voxel (0, 0, 0)")
        .def_property_readonly("voxel_size", [](const Grid& g) { return g.spec.voxel_size; })
        .def_property_readonly("dims", &Grid::dims, "voxels along x, y, z")
        .def("centers", &Grid::centers, py::arg("axis"), "world coordinates of the voxel centres along an axis")
        .def("__repr__", [](const Grid& g) {
            return "Grid(origin=" + py::repr(g.origin()).cast<std::string>() + ", voxel_size=" +
                   py::repr(py::float_(g.spec.voxel_size)).cast<std::string>() + ", dims=" +
                   py::repr(g.dims()).cast<std::string>() + ")";
        });

    auto vdb_common = [](auto& cls) {
        using T = typename std::decay_t<decltype(cls)>::type;
        cls.def_readonly("path", &T::path)
            .def_readonly("kind", &T::kind)
            .def_readonly("creator", &T::creator)
            .def_readonly("checksum", &T::checksum, "the verified trailer's hash name (xxh3-64, fnv1a-64)")
            .def_readonly("grid", &T::grid)
            .def_readonly("metadata", &T::metadata, "the file's haptic: metadata, prefix stripped")
            .def_readonly("grids", &T::grids, "name, value_type, grid_class, active_voxels of every grid");
    };
    py::class_<Voxelmap> voxelmap(m, "Voxelmap", "A layered voxelmap (haptic-voxelize)");
    vdb_common(voxelmap);
    voxelmap.def_readonly("layers", &Voxelmap::layers, "int32 [i, j, k]: 0 on the surface, +n inside, -n outside");

    py::class_<DistanceField> distance(m, "DistanceField", "A signed distance field (haptic-distance), inside positive");
    vdb_common(distance);
    distance.def_readonly("encoding", &DistanceField::encoding, "float, double or scaled")
        .def_readonly("scale_factor", &DistanceField::scale_factor, "10^precision for scaled, else 1")
        .def_readonly("distance", &DistanceField::distance, "float64 [i, j, k], world units, inside positive")
        .def_readonly("stored", &DistanceField::stored, "the distance grid as stored: float32, float64 or scaled int32")
        .def_readonly("layers", &DistanceField::layers, "int32 [i, j, k], the voxelmap's layers")
        .def_readonly("gradient", &DistanceField::gradient, "float32 [i, j, k, 3] unit gradient, or None");

    py::class_<Shell>(m, "Pointshell", "A pointshell (haptic-pointshell): points with inward normals")
        .def_readonly("path", &Shell::path)
        .def_readonly("kind", &Shell::kind)
        .def_readonly("metadata", &Shell::metadata)
        .def_readonly("points", &Shell::points, "float64 (N, 3), world units")
        .def_readonly("normals", &Shell::normals, "float64 (N, 3), unit, inward")
        .def_readonly("triangles", &Shell::triangles, "uint32 (N,), source triangle of each point");

    py::class_<Tree, Shell>(m, "Tree", "A point-sphere tree (haptic-spheretree): the pointshell and its clusters")
        .def_readonly("k", &Tree::k)
        .def_readonly("levels", &Tree::levels)
        .def_readonly("thresholds", &Tree::thresholds, "float64 (levels,), tagging distance per level")
        .def_readonly("level", &Tree::level, "int32 (C,), level of each cluster (1 = root)")
        .def_readonly("center", &Tree::center, "float64 (C, 3), sphere centres")
        .def_readonly("radius", &Tree::radius, "float64 (C,), sphere radii")
        .def_readonly("parent", &Tree::parent, "int32 (C,), parent cluster, -1 for the root")
        .def_readonly("children", &Tree::children, "uint32, children of cluster c: children[children_start[c]:children_start[c+1]]")
        .def_readonly("children_start", &Tree::children_start)
        .def_readonly("cluster_points", &Tree::cluster_points,
                      "uint32, points of cluster c (parent point first): cluster_points[cluster_points_start[c]:...[c+1]]")
        .def_readonly("cluster_points_start", &Tree::cluster_points_start)
        .def_readonly("level_stats", &Tree::level_stats, "per level: clusters, leaves, points, radius, threshold");

    py::class_<Cfm>(m, "Cfm", "A closest feature map (haptic-cfm): one map of sample directions per sphere")
        .def_readonly("path", &Cfm::path)
        .def_readonly("metadata", &Cfm::metadata)
        .def_readonly("file_size", &Cfm::file_size)
        .def_readonly("sampling", &Cfm::sampling)
        .def_readonly("store", &Cfm::store, "normal (normals only) or full")
        .def_readonly("root_stacks", &Cfm::root_stacks)
        .def_readonly("min_stacks", &Cfm::min_stacks)
        .def_readonly("levels", &Cfm::levels)
        .def_readonly("cluster", &Cfm::cluster, "uint32 (S,), tree cluster of each sphere")
        .def_readonly("level", &Cfm::level)
        .def_readonly("center", &Cfm::center)
        .def_readonly("radius", &Cfm::radius)
        .def_readonly("stacks", &Cfm::stacks)
        .def_readonly("single_feature", &Cfm::single_feature)
        .def_readonly("first", &Cfm::first, "uint32 (S,), first record of each sphere")
        .def_readonly("count", &Cfm::count, "uint32 (S,), records of each sphere")
        .def_readonly("normals", &Cfm::normals, "float32 (R, 3), unit outward normals of the records")
        .def_readonly("types", &Cfm::types, "uint8 (R,): 0 face, 1 edge, 2 vertex; None with store normal")
        .def_readonly("features", &Cfm::features, "uint32 (R,) feature index; None with store normal")
        .def_readonly("points", &Cfm::points, "float64 (R, 3) closest points; None with store normal")
        .def(
            "directions",
            [](const Cfm& c, int level) -> py::array_t<double> {
                if (level < 1 || level > c.map.levels) throw py::value_error("level must be 1.." + std::to_string(c.map.levels));
                return vec3_array(c.map.layout(level).directions());
            },
            py::arg("level"), "float64 (n, 3), the sample directions of the spheres of a level")
        .def(
            "lookup",
            [](const Cfm& c, std::size_t sphere, const std::array<double, 3>& d) -> std::size_t {
                if (sphere >= c.map.spheres.size()) throw py::index_error("sphere out of range");
                return c.map.lookup(sphere, {d[0], d[1], d[2]});
            },
            py::arg("sphere"), py::arg("direction"), "the record answering a direction from the sphere's centre");

    py::class_<Mesh>(m, "Mesh", "A mesh as the toolchain imports it (welded, cleaned, oriented) and its diagnostics")
        .def_readonly("path", &Mesh::path)
        .def_readonly("source_name", &Mesh::source_name)
        .def_readonly("source_hash", &Mesh::source_hash)
        .def_readonly("units", &Mesh::units)
        .def_readonly("vertices", &Mesh::vertices, "float64 (V, 3)")
        .def_readonly("triangles", &Mesh::triangles, "uint32 (T, 3), counter-clockwise from outside")
        .def_readonly("diagnostics", &Mesh::diagnostics, "the diagnostics of haptic-dump --json");

    m.def("load_voxelmap", &load_voxelmap, py::arg("path"));
    m.def("load_distance", &load_distance, py::arg("path"), py::arg("gradient") = true);
    m.def("load_pointshell", &load_pointshell, py::arg("path"));
    m.def("load_tree", &load_tree, py::arg("path"));
    m.def("load_cfm", &load_cfm, py::arg("path"));
    m.def("load_mesh", &load_mesh, py::arg("path"), py::arg("units") = "", py::arg("scale") = 1.0,
          py::arg("repair_orientation") = true, py::arg("part") = "",
          "a mesh file flattened, or with part= one part in its own frame (its name, index or \"@G\"; docs/scene.md)");
    m.def("load", &load_any, py::arg("path"), "any file of the toolchain, identified by its content");
}

}  // namespace hp::python
