// haptic-distance: mesh + layered voxelmap -> signed distance field (OpenVDB). See lib/distance.
#include <chrono>
#include <cmath>
#include <iostream>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "distance/distance.hpp"
#include "formats/vdb.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-distance",
        "Compute a signed distance field (inside positive, world units) over the voxels of a layered voxelmap.",
        "Encodings (--encoding): float (default), double, scaled = Int32 round(d * 10^P) (paper eq. 1).\n"
        "The output holds the 'distance' grid, a copy of the voxelmap's 'layers' grid, and with --gradient\n"
        "a Vec3f 'gradient' grid (unit gradient of the distance, pointing to increasing penetration).\n"
        "\nExamples:\n"
        "  haptic-distance bunny.obj bunny.layers.vdb -o bunny.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --encoding scaled --precision 6 -o part.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --gradient --json -o part.dist.vdb\n");
    std::string mesh_path, map_path, output, encoding = "float";
    int precision = 6;
    bool gradient = false, force = false;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path, "the mesh the voxelmap was made from")->required();
    tool.cli.add_option("VOXELMAP", map_path, "layered voxelmap from haptic-voxelize")->required();
    tool.cli.add_option("-o,--output", output, "output distance field (.vdb)")->required();
    tool.cli.add_option("--encoding", encoding, "float, double or scaled")->check(CLI::IsMember({"float", "double", "scaled"}));
    tool.cli.add_option("--precision", precision, "decimal digits P of the scaled encoding (default 6)")->check(CLI::Range(0, 12));
    tool.cli.add_flag("--gradient", gradient, "also write a Vec3f 'gradient' grid");
    tool.cli.add_flag("--force", force, "proceed even if the mesh is not the one the voxelmap was made from");
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        const auto t_start = std::chrono::steady_clock::now();
        hp::vdb::FileInfo info;
        std::vector<std::int32_t> layers = hp::vdb::read_int32(map_path, "layers", &info);
        if (info.metadata.value("kind", "") != "voxelmap")
            hp::fail_input(map_path, "is not a voxelmap of haptic-voxelize (kind '" + info.metadata.value("kind", "?") + "')");
        // The mesh is read with the voxelmap's --units/--scale unless others are given.
        nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
        if (params.is_discarded()) params = nlohmann::json::object();
        if (tool.cli.count("--units") == 0) mopt.units = params.value("units", "");
        if (tool.cli.count("--scale") == 0) mopt.scale = params.value("scale", 1.0);
        hp::LoadedMesh m = hp::load_mesh(mesh_path, mopt);
        const std::string mismatch = hp::check_source_hash(mesh_path, m.source_hash, map_path, "voxelmap",
                                                           info.metadata.value("source_hash", ""), force, "--force");
        if (!mismatch.empty()) tool.warn(mismatch);
        hp::DistanceOptions dopt;
        dopt.connectivity = static_cast<int>(info.metadata.value("connectivity", std::int64_t{26}));
        dopt.gradient = gradient;
        hp::DistanceField field = hp::compute_distance(m.mesh, info.grid, layers, dopt, tool.progress());

        double lo = 0, hi = 0;
        for (double v : field.values) lo = std::min(lo, v), hi = std::max(hi, v);
        const double factor = std::pow(10.0, precision);
        if (encoding == "scaled" && std::max(-lo, hi) * factor > 2147483647.0)
            hp::fail_usage("--precision " + std::to_string(precision) + " overflows Int32 for distances up to " +
                           std::to_string(std::max(-lo, hi)) + "; use at most " +
                           std::to_string(static_cast<int>(std::floor(std::log10(2147483647.0 / std::max(-lo, hi))))));

        nlohmann::json meta = info.metadata;  // keeps the voxelmap's provenance (source, fill...)
        meta["kind"] = "distance";
        meta["tool"] = "haptic-distance";
        meta["tool_version"] = hp::kVersion;
        meta["encoding"] = encoding;
        meta["precision"] = encoding == "scaled" ? precision : -1;
        meta["scale_factor"] = encoding == "scaled" ? factor : 1.0;
        meta["voxelmap"] = std::filesystem::path(map_path).filename().string();
        meta["method"] = "exact BVH closest points within 3 voxels of the surface; closest-feature propagation beyond";
        meta["distance_parameters"] = nlohmann::json{{"encoding", encoding}, {"precision", precision}, {"gradient", gradient}}.dump();
        meta.erase("grid");
        meta.erase("format_version");

        const hp::GridSpec& g = info.grid;
        const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
        std::vector<hp::vdb::GridOut> grids;
        auto at = [&](int z) { return static_cast<std::size_t>(z) * slice; };
        if (encoding == "float")
            grids.push_back({"distance", hp::vdb::ValueType::float32, [&](int z, void* out) {
                                 auto* d = static_cast<float*>(out);
                                 for (std::size_t i = 0; i < slice; ++i) d[i] = static_cast<float>(field.values[at(z) + i]);
                             }, lo - g.voxel_size});
        else if (encoding == "double")
            grids.push_back({"distance", hp::vdb::ValueType::float64, [&](int z, void* out) {
                                 std::copy_n(field.values.data() + at(z), slice, static_cast<double*>(out));
                             }, lo - g.voxel_size});
        else
            grids.push_back({"distance", hp::vdb::ValueType::int32, [&](int z, void* out) {
                                 auto* d = static_cast<std::int32_t*>(out);
                                 for (std::size_t i = 0; i < slice; ++i)
                                     d[i] = static_cast<std::int32_t>(std::llround(field.values[at(z) + i] * factor));
                             }, std::round((lo - g.voxel_size) * factor)});
        grids.push_back({"layers", hp::vdb::ValueType::int32, [&](int z, void* out) {
                             std::copy_n(layers.data() + at(z), slice, static_cast<std::int32_t*>(out));
                         }, -1.0});
        if (gradient)
            grids.push_back({"gradient", hp::vdb::ValueType::vec3f, [&](int z, void* out) {
                                 std::copy_n(field.gradient.data() + 3 * at(z), 3 * slice, static_cast<float*>(out));
                             }, 0.0});
        const auto t_write = std::chrono::steady_clock::now();
        hp::vdb::write(output, g, grids, meta, std::string("hapticprep ") + hp::kVersion);
        const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();
        const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        const std::size_t rss = hp::app::peak_rss_bytes();
        nlohmann::json j{{"output", output}, {"mesh", hp::to_json(m.diagnostics)}, {"encoding", encoding},
                         {"precision", encoding == "scaled" ? precision : -1},
                         {"grid", {{"dims", {g.dims[0], g.dims[1], g.dims[2]}}, {"voxel_size", g.voxel_size}}},
                         {"range", {lo, hi}}, {"exact_voxels", field.exact_voxels}, {"propagation_passes", field.propagation_passes},
                         {"seconds", {{"exact", field.seconds_exact}, {"propagate", field.seconds_propagate},
                                      {"write", write_s}, {"total", total_s}}},
                         {"file_bytes", std::filesystem::file_size(output)}, {"peak_rss_bytes", rss}};
        tool.print_json(j);
        if (tool.text_output()) {
            std::printf("grid         %d x %d x %d voxels, voxel size %.6g\n", g.dims[0], g.dims[1], g.dims[2], g.voxel_size);
            std::printf("distance     %.6g .. %.6g (inside positive), encoding %s\n", lo, hi, encoding.c_str());
            std::printf("exact        %s voxels within 3 voxels of the surface\n", hp::with_commas(field.exact_voxels).c_str());
            std::printf("time         exact %.3f s, propagate %.3f s, write %.3f s, total %.3f s\n", field.seconds_exact,
                        field.seconds_propagate, write_s, total_s);
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s (%s)\n", output.c_str(),
                        hp::human_bytes(static_cast<double>(std::filesystem::file_size(output))).c_str());
        }
        return 0;
    });
}
