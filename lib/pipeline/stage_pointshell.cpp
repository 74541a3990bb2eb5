// The pointshell stage: the body of haptic-pointshell (apps/haptic-pointshell.cpp parses its
// options and calls this).
#include <chrono>
#include <filesystem>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "pipeline/stage_runs.hpp"
#include "pointshell/pointshell.hpp"

namespace hp::pipeline {

nlohmann::json run_pointshell(const StageContext& ctx) {
    const auto t0 = std::chrono::steady_clock::now();
    const nlohmann::json& p = ctx.params;
    // FIELD: the distance field when the pipeline makes one, else the voxelmap.
    const std::filesystem::path field_path =
        ctx.inputs->count("distance") ? ctx.inputs->at("distance") : ctx.inputs->at("voxelmap");
    const double alpha = p.at("alpha").get<double>();
    const std::string normals = p.at("normals").get<std::string>();
    const bool force = p.at("force").get<bool>();

    vdb::FileInfo info;
    ShellField field = read_shell_field(field_path, info);
    nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
    if (params.is_discarded() || !params.is_object()) params = nlohmann::json::object();
    // The mesh is read with the field's units/scale unless others are given.
    MeshLoadOptions mopt;
    mopt.units = p.at("units").is_null() ? params.value("units", "") : p.at("units").get<std::string>();
    mopt.scale = p.at("scale").is_null() ? params.value("scale", 1.0) : p.at("scale").get<double>();
    const LoadedMesh& m = ctx.load_mesh(mopt);
    nlohmann::json warnings = nlohmann::json::array();
    const std::string mismatch = check_source_hash(ctx.mesh.string(), m.source_hash, field_path.string(), "field",
                                                   info.metadata.value("source_hash", ""), force, ctx.option_name("force"));
    if (!mismatch.empty()) warnings.push_back(mismatch);
    const double read_s = seconds_since(t0);

    PointshellOptions opt;
    opt.alpha = alpha;
    opt.normals = normals == "surface" ? ShellNormals::surface : ShellNormals::gradient;
    const GridSpec g = field.grid;
    const auto t1 = std::chrono::steady_clock::now();
    PointshellResult r;
    try {
        r = sample_pointshell(m.mesh, std::move(field), opt, ctx.progress);
    } catch (const Error& e) {
        if (e.code() == ExitCode::bad_input) fail_input(field_path.string(), e.what());
        throw;
    }
    const double sample_s = seconds_since(t1);
    if (r.shell.points.empty())
        fail_input(field_path.string(), "no surface voxel lies in the bounding box of any triangle of " + ctx.mesh.string() +
                                            " (is it the right mesh?)");

    const auto t2 = std::chrono::steady_clock::now();
    const SpacingStats sp = nearest_neighbour_spacing(r.shell.points);
    const CoverageStats cov = sampled_coverage(m.mesh, r.shell.points);
    const double stats_s = seconds_since(t2);
    const double as = alpha * g.voxel_size;
    const nlohmann::json stats = shell_statistics_json(r, sp, cov, as);
    // The greedy rule keeps every candidate within alpha*s of a point, so a larger gap means the
    // field lacks surface voxels along part of the mesh (or it is not this mesh's field).
    if (stats["coverage"]["gap"].get<bool>())
        warnings.push_back("a gap in the pointshell: a surface point lies " + std::to_string(cov.max / as).substr(0, 5) +
                           " alpha*s from the nearest point (expected <= 1.5); " + field_path.string() +
                           " has no surface voxels along part of the mesh");
    nlohmann::json meta{{"kind", "pointshell"},
                        {"tool", "haptic-pointshell"},
                        {"tool_version", kVersion},
                        {"source_name", m.source_name},
                        {"source_hash", m.source_hash},
                        {"units", m.units},
                        {"parameters", {{"alpha", alpha}, {"normals", normals}, {"units", mopt.units}, {"scale", mopt.scale}}},
                        {"field", field_path.filename().string()},
                        {"field_kind", info.metadata.value("kind", "")},
                        {"grid", {{"origin", {g.origin.x, g.origin.y, g.origin.z}}, {"voxel_size", g.voxel_size},
                                  {"dims", {g.dims[0], g.dims[1], g.dims[2]}}}},
                        {"normal_source", r.normal_source},
                        {"statistics", stats}};
    const auto t3 = std::chrono::steady_clock::now();
    write_shell_file(ctx.output, meta, r.shell);
    const double write_s = seconds_since(t3);

    nlohmann::json j = stats;
    j["grid"] = meta["grid"];
    j["alpha"] = alpha;
    j["normals"] = {{"mode", normals}, {"source", r.normal_source}, {"surface_fallbacks", r.surface_fallbacks},
                    {"dropped_no_normal", r.dropped_no_normal}, {"components", r.components},
                    {"inverted_components", r.inverted_components}};
    j["candidates"] = r.candidates;
    j["colours"] = r.colours;
    j["seconds"] = {{"read", read_s}, {"sample", sample_s}, {"statistics", stats_s}, {"write", write_s}};
    j["warnings"] = warnings;
    return j;
}

}  // namespace hp::pipeline
