#include "inspect/check.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "formats/container.hpp"
#include "formats/vdb.hpp"
#include "scene/scene_file.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

namespace {

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

// Layers against distances (world units, inside positive) over the same grid.
// `quantum`: the encoding's rounding step (1 / scale factor for scaled, 0 else).
void check_layers_vs_distance(const GridSpec& g, const std::vector<std::int32_t>& layers, const std::vector<double>& d,
                              double quantum, CheckReport& r) {
    const double s = g.voxel_size;
    // A surface voxel overlaps a triangle, so its centre is within half its diagonal of the surface.
    // (Float storage rounds relatively by 6e-8, hence 1e-6; scaled storage by half a step.)
    const double surface_limit = 0.5 * std::sqrt(3.0) * s * (1 + 1e-6) + 0.5 * quantum;
    // (No lower bound on |d| from the layer number: with internal faces or layers that step only
    // through one side, a voxel's layer can exceed its distance to the nearest triangle.)
    std::size_t sign = 0, surface = 0;
    std::string first_sign, first_surface;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::size_t n = g.index(i, j, k);
                const int l = layers[n];
                const double v = d[n];
                auto at = [&] {  // only built for the first problem of each kind
                    return "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): layer " +
                           std::to_string(l) + ", distance " + fmt("%.6g", v);
                };
                if (l == 0) {
                    if (!(std::abs(v) <= surface_limit) && surface++ == 0) first_surface = at();
                } else if (!((l > 0 && v > 0) || (l < 0 && v < 0))) {
                    if (sign++ == 0) first_sign = at();
                }
            }
    if (sign) r.problem(std::to_string(sign) + " voxels where the sign of the distance disagrees with the layer, first at " + first_sign);
    else r.pass("the sign of every distance agrees with its layer");
    if (surface) r.problem(std::to_string(surface) + " surface voxels farther than half a voxel diagonal from the surface, first at " + first_surface);
    else r.pass("surface voxels lie within half a voxel diagonal of the surface");
}

// The gradient grid of a distance file against its layers: every value finite; of unit length
// wherever the field defines it (dense: every voxel; band B: voxels with |layer| < B, what
// compute_gradient_band computes), zero elsewhere (the band's voxels and tiles beyond it).
void check_gradient(const vdb::Reader& reader, const GridSpec& g, const std::vector<std::int32_t>& layers, int band,
                    CheckReport& r) {
    constexpr double kUnitTolerance = 1e-4;  // float rounding of a unit vector is about 1e-7
    std::size_t nonfinite = 0, nonunit = 0, nonzero = 0;
    std::string first_nonfinite, first_nonunit, first_nonzero;
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    reader.read_slices("gradient", vdb::ValueType::vec3f, [&](int k, const void* values) {
        const float* v = static_cast<const float*>(values);
        for (std::size_t o = 0; o < slice; ++o) {
            const std::size_t n = static_cast<std::size_t>(k) * slice + o;
            const double x = v[3 * o], y = v[3 * o + 1], z = v[3 * o + 2];
            const int l = layers[n];
            auto at = [&] {  // only built for the first problem of each kind
                const int i = static_cast<int>(o % static_cast<std::size_t>(g.dims[0]));
                const int j = static_cast<int>(o / static_cast<std::size_t>(g.dims[0]));
                return "(" + std::to_string(i) + ", " + std::to_string(j) + ", " + std::to_string(k) + "): layer " +
                       std::to_string(l) + ", gradient " + fmt("(%.6g, %.6g, %.6g)", x, y, z);
            };
            if (!(std::isfinite(x) && std::isfinite(y) && std::isfinite(z))) {
                if (nonfinite++ == 0) first_nonfinite = at();
            } else if (band == 0 || std::abs(l) < band) {
                if (!(std::abs(std::sqrt(x * x + y * y + z * z) - 1) <= kUnitTolerance) && nonunit++ == 0) first_nonunit = at();
            } else if ((x != 0 || y != 0 || z != 0) && nonzero++ == 0) {
                first_nonzero = at();
            }
        }
    });
    if (nonfinite) r.problem(std::to_string(nonfinite) + " gradients are not finite, first at " + first_nonfinite);
    else r.pass("every gradient is finite");
    const std::string where = band == 0 ? "voxels" : "band voxels (|layer| < " + std::to_string(band) + ")";
    if (nonunit) r.problem(std::to_string(nonunit) + " gradients on " + where + " are not of unit length, first at " + first_nonunit);
    else r.pass("the gradient has unit length on every " + (band == 0 ? std::string("voxel") : "band voxel"));
    if (band > 0) {
        if (nonzero) r.problem(std::to_string(nonzero) + " gradients beyond the band are not zero, first at " + first_nonzero);
        else r.pass("the gradient is zero beyond the band");
    }
}

}  // namespace

Summary CheckReport::summary(std::size_t max_problems) const {
    Summary s;
    std::ostringstream o;
    o << "file         " << file << "\nkind         " << kind << "\n";
    for (const auto& p : passed) o << "ok           " << p << "\n";
    for (std::size_t n = 0; n < problems.size() && n < max_problems; ++n) o << "PROBLEM      " << problems[n] << "\n";
    if (problems.size() > max_problems) o << "             ... and " << problems.size() - max_problems << " more\n";
    o << "check        " << (ok() ? "passed (" + std::to_string(passed.size()) + " checks)" : "FAILED (" + std::to_string(problems.size()) + " problems)") << "\n";
    s.text = o.str();
    s.json = {{"file", file}, {"kind", kind}, {"check", {{"ok", ok()}, {"checks", passed.size()}, {"passed", passed}, {"problems", problems}}}};
    return s;
}

CheckReport check(const fs::path& path, const MeshLoadOptions& mesh_options) {
    require_file(path);
    CheckReport r;
    r.file = path.string();
    if (container::looks_like_container(path)) {
        check_container(path, r);
    } else if (vdb::looks_like_vdb(path)) {
        check_vdb(path, r);
    } else if (scene::looks_like_scene(path)) {
        check_scene(path, r);
    } else {
        LoadedMesh m = load_mesh(path, mesh_options);  // throws when unreadable
        r.kind = "mesh";
        r.pass("the mesh reads: " + std::to_string(m.diagnostics.triangles) + " triangles");
    }
    return r;
}

void check_container(const fs::path& path, CheckReport& r) {
    container::Reader reader = container::Reader::open(path);  // header, sections, every checksum
    r.kind = container::kind_name(reader.kind());
    r.pass("header, section framing and every section checksum");
    const nlohmann::json& meta = reader.metadata();
    for (const char* key : {"tool", "tool_version", "sign_convention"})
        if (!meta.contains(key)) r.problem(std::string("metadata has no '") + key + "'");
    // Per-kind hooks, one line each (see check.hpp).
    if (reader.kind() == container::Kind::pointshell || reader.kind() == container::Kind::tree) check_shell(path, r);
    if (reader.kind() == container::Kind::octree) check_octree(path, r);
    if (reader.kind() == container::Kind::sampler) check_sampler(path, r);
}

void check_vdb(const fs::path& path, CheckReport& r) {
    const vdb::Reader reader = vdb::Reader::open(path, true);  // checksum trailer, framing, format version: once
    const vdb::FileInfo& info = reader.info();
    const bool has = [&] {
        for (const auto& g : info.grids)
            if (g.name == "distance") return true;
        return false;
    }();
    r.kind = !info.ours ? "vdb" : has ? "distance field" : "voxelmap";
    if (!info.ours) {
        r.problem("not written by hapticprep (no haptic: metadata, no checksum to verify)");
        return;
    }
    r.pass("checksum trailer (" + info.checksum + ") and VDB framing");
    const nlohmann::json& m = info.metadata;
    const GridSpec& g = info.grid;
    std::vector<std::string> missing;
    for (const char* key : {"format_version", "grid", "voxel_size", "sign_convention", "tool", "tool_version", "kind",
                            "source_name", "source_hash", "parameters"})
        if (!m.contains(key)) missing.push_back(key);
    const std::string kind = m.value("kind", "");
    if (kind == "distance")
        for (const char* key : {"encoding", "scale_factor", "voxelmap"})
            if (!m.contains(key)) missing.push_back(key);
    if (!missing.empty()) {
        std::string list;
        for (const auto& k : missing) list += (list.empty() ? "" : ", ") + k;
        r.problem("metadata incomplete: no haptic:" + list);
    } else {
        r.pass("metadata complete (format version, grid, voxel size, sign convention, tool, version, kind, source, parameters)");
    }
    if (m.contains("sign_convention") && m["sign_convention"] != "inside_positive")
        r.problem("haptic:sign_convention is " + m["sign_convention"].dump() + ", expected \"inside_positive\"");
    if (m.contains("parameters") && (!m["parameters"].is_string() || !nlohmann::json::parse(m["parameters"].get<std::string>(), nullptr, false).is_object()))
        r.problem("haptic:parameters is not a JSON object");
    if (m.contains("voxel_size") && !(m["voxel_size"].is_number() && m["voxel_size"].get<double>() == g.voxel_size))
        r.problem("haptic:voxel_size " + m["voxel_size"].dump() + " differs from the grid's " + fmt("%.17g", g.voxel_size));
    if (kind != "voxelmap" && kind != "distance")
        r.problem("haptic:kind is '" + kind + "', expected voxelmap or distance");
    // Grids: each covers exactly the grid spec's voxels and carries the same spec.
    std::string layers_type, distance_type, gradient_type;
    bool dims_ok = true;
    for (const auto& gi : info.grids) {
        if (gi.name == "layers") layers_type = gi.value_type;
        if (gi.name == "distance") distance_type = gi.value_type;
        if (gi.name == "gradient") gradient_type = gi.value_type;
        if (gi.active_voxels != g.count()) {
            dims_ok = false;
            r.problem("grid '" + gi.name + "' has " + std::to_string(gi.active_voxels) + " active voxels, the grid spec " +
                      std::to_string(g.count()) + " (" + std::to_string(g.dims[0]) + " x " + std::to_string(g.dims[1]) + " x " +
                      std::to_string(g.dims[2]) + ")");
        }
    }
    if (dims_ok) r.pass("every grid covers the " + std::to_string(g.dims[0]) + " x " + std::to_string(g.dims[1]) + " x " +
                        std::to_string(g.dims[2]) + " voxels of the grid spec");
    if (layers_type != "int32") r.problem(layers_type.empty() ? "no 'layers' grid" : "grid 'layers' holds " + layers_type + ", expected int32");
    if (kind == "distance" && distance_type.empty()) r.problem("a distance file without a 'distance' grid");
    if (!gradient_type.empty() && gradient_type != "vec3s")
        r.problem("grid 'gradient' holds " + gradient_type + ", expected vec3s");
    if (!r.ok() || distance_type.empty()) return;
    // Layers against distances.
    double quantum = 0;
    const std::string encoding = m.value("encoding", "");
    if (distance_type == "int32") {
        const double factor = m.value("scale_factor", 0.0);
        const double precision = static_cast<double>(m.value("precision", std::int64_t{-1}));
        if (vdb::parse_distance_encoding(encoding) != vdb::DistanceEncoding::scaled)
            r.problem("Int32 distances but haptic:encoding is '" + encoding + "'");
        if (!(factor > 0) || std::abs(factor - std::pow(10.0, precision)) > 1e-9 * factor)
            r.problem("haptic:scale_factor " + fmt("%.17g", factor) + " is not 10^precision (" + fmt("%.0f", precision) + ")");
        quantum = 1 / factor;
    } else if (vdb::parse_distance_encoding(encoding) !=
               (distance_type == "double" ? vdb::DistanceEncoding::float64 : vdb::DistanceEncoding::float32)) {
        r.problem(distance_type + " distances but haptic:encoding is '" + encoding + "'");
    }
    if (!r.ok()) return;
    const std::vector<std::int32_t> layers = reader.read_int32("layers");
    check_layers_vs_distance(g, layers, reader.read_distance(), quantum, r);
    if (!gradient_type.empty()) check_gradient(reader, g, layers, static_cast<int>(m.value("band", std::int64_t{0})), r);
}

}  // namespace hp::inspect
