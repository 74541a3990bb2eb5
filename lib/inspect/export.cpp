#include "inspect/export.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/container.hpp"
#include "formats/vdb.hpp"
#include "formats/vdb_levelset.hpp"
#include "inspect/export_ply.hpp"
#include "inspect/tree.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

Summary export_file(const fs::path& path, const std::string& format, const fs::path& out, const ExportOptions& options,
                    const Progress& progress) {
    if (options.level > 0 && format != "ply" && format != "obj") fail_usage("--level goes with --export ply or obj");
    if (format == "obj" && container::looks_like_container(path) &&
        container::Reader::open(path).kind() == container::Kind::octree) {
        if (out.empty()) fail_usage("--export obj needs an output file (-o OUT)");
        // Octree levels count from the voxels (0) up; --level 0 cannot be told from no --level.
        const int level = options.level > 0 ? options.level : 0;
        const std::size_t n = export_octree_level_obj(path, out, level);
        Summary s;
        s.json = {{"file", path.string()}, {"export", format}, {"output", out.string()}, {"level", level}, {"spheres", n}};
        s.text = "exported     " + std::to_string(n) + " spheres of octree level " + std::to_string(level) +
                 " as icosahedra to " + out.string() + "\n";
        return s;
    }
    if (format != "levelset" && format != "ply" && format != "json" && format != "obj")
        fail_usage("--export " + format + ": unknown format (levelset, ply, json, obj)");
    if (out.empty()) fail_usage("--export " + format + " needs an output file (-o OUT)");
    if (format == "levelset") return export_levelset(path, out, progress);
    Summary s;
    if (format == "json") {
        if (is_shell_file(path)) {  // trees; a plain pointshell is refused there
            const std::size_t n = export_tree_json(path, out);
            s.json = {{"file", path.string()}, {"export", format}, {"output", out.string()}, {"clusters", n}};
            s.text = "exported     " + std::to_string(n) + " clusters and their points to " + out.string() + "\n";
            return s;
        }
        export_cfm_json(path, out);  // refuses other kinds (exit 3)
        s.json = {{"file", path.string()}, {"export", format}, {"output", out.string()}};
        s.text = "exported     the closest feature map as JSON to " + out.string() + "\n";
        return s;
    }
    if (format == "obj") {
        if (options.level <= 0) fail_usage("--export obj writes the spheres of one tree level: add --level L (1 = root)");
        const std::size_t n = export_tree_level_obj(path, out, options.level);
        s.json = {{"file", path.string()}, {"export", format}, {"output", out.string()}, {"level", options.level}, {"spheres", n}};
        s.text = "exported     " + std::to_string(n) + " spheres of level " + std::to_string(options.level) +
                 " as icosahedra to " + out.string() + "\n";
        return s;
    }
    const int level = options.level;
    const std::size_t n = level > 0 ? export_tree_level_ply(path, out, level, options.ascii)
                                    : export_shell_ply(path, out, options.ascii);
    s.json = {{"file", path.string()}, {"export", format}, {"output", out.string()},
              {"encoding", options.ascii ? "ascii" : "binary_little_endian"}, {"points", n}, {"level", level}};
    s.text = "exported     " + std::to_string(n) + (level > 0 ? " parent points of level " + std::to_string(level) : " points") +
             " with normals to " + out.string() + "\n";
    return s;
}

Summary export_levelset(const fs::path& path, const fs::path& out, const Progress& progress) {
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_directory(path, ec) && fs::file_size(path, ec) == 0)
        fail_input(path.string(), "the file is empty (0 bytes)");
    if (container::looks_like_container(path)) {
        container::Reader r = container::Reader::open(path);
        fail_input(path.string(), std::string("is a ") + container::kind_name(r.kind()) +
                                      "; --export levelset reads voxelmaps and distance fields");
    }
    if (!vdb::looks_like_vdb(path))
        fail_input(path.string(), "not a voxelmap or distance field (no OpenVDB magic number); --export levelset reads those only");
    const vdb::Reader reader = vdb::Reader::open(path);  // verified once
    const vdb::FileInfo& info = reader.info();
    if (!info.ours)
        fail_input(path.string(), "is a VDB file but not one written by hapticprep; --export levelset reads our voxelmaps and distance fields");
    std::string source, type;
    for (const auto& g : info.grids)
        if (g.name == "distance") source = g.name, type = g.value_type;
    if (source.empty())
        for (const auto& g : info.grids)
            if (g.name == "layers") source = g.name, type = g.value_type;
    if (source.empty()) fail_input(path.string(), "has neither a 'distance' nor a 'layers' grid (damaged file?)");

    const GridSpec& g = info.grid;
    // phi = -value * factor: inside negative, world units.
    double factor = source == "layers" ? g.voxel_size : 1.0;
    if (source == "distance" && type == "int32") {
        const double scale = info.metadata.value("scale_factor", 0.0);
        if (!(scale > 0)) fail_input(path.string(), "its haptic:scale_factor is not a positive number (damaged file?)");
        factor = 1.0 / scale;
    }
    vdb::LevelSetWriter writer(g);
    const std::size_t n = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    std::vector<float> phi(n);
    auto convert = [&](int z, const auto* v) {
        for (std::size_t k = 0; k < n; ++k) phi[k] = static_cast<float>(-static_cast<double>(v[k]) * factor);
        writer.add_slice(z, phi.data());
        progress.report("read", static_cast<double>(z + 1) / g.dims[2]);
    };
    if (type == "int32")
        reader.read_slices(source, vdb::ValueType::int32, [&](int z, const void* p) { convert(z, static_cast<const std::int32_t*>(p)); });
    else if (type == "float")
        reader.read_slices(source, vdb::ValueType::float32, [&](int z, const void* p) { convert(z, static_cast<const float*>(p)); });
    else if (type == "double")
        reader.read_slices(source, vdb::ValueType::float64, [&](int z, const void* p) { convert(z, static_cast<const double*>(p)); });
    else
        fail_input(path.string(), "grid '" + source + "' holds " + type + " values, expected int32, float or double");
    const std::size_t band = writer.active_voxels();
    writer.write(out, std::string("hapticprep ") + kVersion + " (haptic-dump --export levelset)", progress);

    Summary s;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "wrote %s: OpenVDB level set 'surface' (inside negative, world units) from the %s grid of %s, "
                  "%zu narrow-band voxels, background %.6g (3 voxels)\n",
                  out.string().c_str(), source.c_str(), path.string().c_str(), band, 3 * g.voxel_size);
    s.text = buf;
    s.json = {{"file", path.string()},
              {"export", "levelset"},
              {"output", out.string()},
              {"grid", "surface"},
              {"grid_class", "level set"},
              {"from", source},
              {"sign_convention", "inside_negative"},
              {"voxel_size", g.voxel_size},
              {"background", 3 * g.voxel_size},
              {"band_voxels", band}};
    return s;
}

}  // namespace hp::inspect
