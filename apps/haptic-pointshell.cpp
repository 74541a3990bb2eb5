// haptic-pointshell: mesh + voxelmap/distance field -> pointshell (.hps). See lib/pointshell.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "pointshell/pointshell.hpp"

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-pointshell",
        "Sample the surface of a mesh into a pointshell: points on the mesh about alpha voxels apart, each with a unit\n"
        "inward normal and its source triangle (paper 000, section 2.1.2).",
        "FIELD is the voxelmap (haptic-voxelize) or distance field (haptic-distance) made from MESH: its surface\n"
        "voxels define the sampling; gradient normals come from its distances (or, for a voxelmap, its layers).\n"
        "\nExamples:\n"
        "  haptic-pointshell bunny.obj bunny.dist.vdb -o bunny.hps\n"
        "  haptic-pointshell part.stl part.layers.vdb --normals surface --alpha 2 -o part.hps\n"
        "  haptic-pointshell part.stl part.dist.vdb --json -o part.hps | jq .spacing\n");
    std::string mesh_path, field_path, output, normals = "gradient";
    double alpha = std::sqrt(2.0);
    bool force = false;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path, "the mesh the field was made from")->required();
    tool.cli.add_option("FIELD", field_path, "voxelmap or distance field (.vdb) of the mesh")->required();
    tool.cli.add_option("-o,--output", output, "output pointshell (.hps)")->required();
    tool.cli.add_option("--alpha", alpha, "minimum spacing in voxel sizes (default sqrt 2 = 1.414)")->check(CLI::PositiveNumber);
    tool.cli.add_option("--normals", normals, "gradient (of the distance field, default) or surface (angle-weighted)")
        ->check(CLI::IsMember({"gradient", "surface"}));
    tool.cli.add_flag("--force", force, "proceed even if the mesh is not the one the field was made from");
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        hp::vdb::FileInfo info;
        hp::ShellField field = hp::read_shell_field(field_path, info);
        nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
        if (params.is_discarded() || !params.is_object()) params = nlohmann::json::object();
        if (tool.cli.count("--units") == 0) mopt.units = params.value("units", "");
        if (tool.cli.count("--scale") == 0) mopt.scale = params.value("scale", 1.0);
        hp::LoadedMesh m = hp::load_mesh(mesh_path, mopt);
        const std::string mismatch = hp::check_source_hash(mesh_path, m.source_hash, field_path, "field",
                                                           info.metadata.value("source_hash", ""), force, "--force");
        if (!mismatch.empty()) tool.warn(mismatch);
        const double read_s = since(t0);

        hp::PointshellOptions opt;
        opt.alpha = alpha;
        opt.normals = normals == "surface" ? hp::ShellNormals::surface : hp::ShellNormals::gradient;
        const hp::GridSpec g = field.grid;
        const auto t1 = std::chrono::steady_clock::now();
        hp::PointshellResult r;
        try {
            r = hp::sample_pointshell(m.mesh, std::move(field), opt, tool.progress());
        } catch (const hp::Error& e) {
            if (e.code() == hp::ExitCode::bad_input) hp::fail_input(field_path, e.what());
            throw;
        }
        const double sample_s = since(t1);
        if (r.shell.points.empty()) hp::fail_input(field_path, "no surface voxel lies in the bounding box of any triangle of " + mesh_path + " (is it the right mesh?)");

        const auto t2 = std::chrono::steady_clock::now();
        const hp::SpacingStats sp = hp::nearest_neighbour_spacing(r.shell.points);
        const hp::CoverageStats cov = hp::sampled_coverage(m.mesh, r.shell.points);
        const double stats_s = since(t2);
        const double as = alpha * g.voxel_size;
        const nlohmann::json stats = hp::shell_statistics_json(r, sp, cov, as);
        if (stats["coverage"]["gap"].get<bool>())
            tool.warn("a gap in the pointshell: a surface point lies " + std::to_string(cov.max / as).substr(0, 5) +
                      " alpha*s from the nearest point (expected <= 1.5); " + field_path +
                      " has no surface voxels along part of the mesh");

        nlohmann::json meta{{"kind", "pointshell"},
                            {"tool", "haptic-pointshell"},
                            {"tool_version", hp::kVersion},
                            {"source_name", m.source_name},
                            {"source_hash", m.source_hash},
                            {"units", m.units},
                            {"parameters", {{"alpha", alpha}, {"normals", normals}, {"units", mopt.units}, {"scale", mopt.scale}}},
                            {"field", std::filesystem::path(field_path).filename().string()},
                            {"field_kind", info.metadata.value("kind", "")},
                            {"grid", {{"origin", {g.origin.x, g.origin.y, g.origin.z}}, {"voxel_size", g.voxel_size},
                                      {"dims", {g.dims[0], g.dims[1], g.dims[2]}}}},
                            {"normal_source", r.normal_source},
                            {"statistics", stats}};
        const auto t3 = std::chrono::steady_clock::now();
        hp::write_shell_file(output, meta, r.shell);
        const double write_s = since(t3), total_s = since(t0);

        nlohmann::json j = stats;
        j["output"] = output;
        j["mesh"] = hp::to_json(m.diagnostics);
        j["grid"] = meta["grid"];
        j["alpha"] = alpha;
        j["normals"] = {{"mode", normals}, {"source", r.normal_source}, {"surface_fallbacks", r.surface_fallbacks},
                        {"dropped_no_normal", r.dropped_no_normal}, {"components", r.components},
                        {"inverted_components", r.inverted_components}};
        j["candidates"] = r.candidates;
        j["colours"] = r.colours;
        j["seconds"] = {{"read", read_s}, {"sample", sample_s}, {"statistics", stats_s}, {"write", write_s}, {"total", total_s}};
        j["file_bytes"] = std::filesystem::file_size(output);
        j["peak_rss_bytes"] = hp::app::peak_rss_bytes();
        tool.print_json(j);
        if (tool.text_output()) {
            const double s = g.voxel_size;
            std::printf("grid         %d x %d x %d voxels, voxel size %.6g\n", g.dims[0], g.dims[1], g.dims[2], s);
            std::printf("points       %s (from %s projected voxel centres, %zu colours)\n",
                        hp::with_commas(r.shell.points.size()).c_str(), hp::with_commas(r.candidates).c_str(), r.colours);
            std::printf("spacing      nearest neighbour min %.4g (%.2f alpha*s), median %.4g (%.2f alpha*s), alpha*s = %.4g\n",
                        sp.min, sp.min / as, sp.median, sp.median / as, as);
            std::printf("coverage     surface to nearest point: max %.4g (%.2f alpha*s), p99 %.4g, %s samples\n", cov.max,
                        cov.max / as, cov.p99, hp::with_commas(cov.samples).c_str());
            std::printf("normals      %s, inward; deviation from the triangle's normal median %.2f deg, p95 %.2f deg, max %.1f deg\n",
                        r.normal_source.c_str(), r.deviation_median_deg, r.deviation_p95_deg, r.deviation_max_deg);
            if (r.surface_fallbacks || r.inverted_components || r.dropped_no_normal)
                std::printf("             %zu points took the surface normal (weak or outward gradient), %zu of %zu components "
                            "wound inward, %zu candidates without a normal\n",
                            r.surface_fallbacks, r.inverted_components, r.components, r.dropped_no_normal);
            std::printf("time         read %.3f s, sample %.3f s, statistics %.3f s, write %.3f s, total %.3f s\n", read_s,
                        sample_s, stats_s, write_s, total_s);
            std::printf("wrote        %s (%s)\n", output.c_str(),
                        hp::human_bytes(static_cast<double>(std::filesystem::file_size(output))).c_str());
        }
        return 0;
    });
}
