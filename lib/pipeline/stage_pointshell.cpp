// The pointshell stage: its declaration (options bound to PointshellParams), its body (shared with
// haptic-pointshell, which adds its files) and its summary (to_json, format_text).
#include <chrono>
#include <filesystem>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "formats/vdb.hpp"
#include "pipeline/stage_pointshell.hpp"

namespace hp::pipeline {

ShellField read_shell_field(const std::filesystem::path& path, vdb::FileInfo& info) {
    ShellField f;
    const std::string where = path.string();
    const vdb::Reader reader = vdb::Reader::open(path);  // verified once for both grids
    info = reader.info();
    f.layers = reader.read_int32("layers");
    const std::string kind = info.metadata.value("kind", "");
    if (kind != "voxelmap" && kind != "distance")
        fail_input(where, "is not a voxelmap or distance field of hapticprep (kind '" + (kind.empty() ? "?" : kind) +
                              "'); make one with haptic-voxelize or haptic-distance");
    f.grid = info.grid;
    if (kind == "distance") f.distance = reader.read_distance();
    return f;
}


StageSpec pointshell_stage() {
    StageSpec s;
    s.name = "pointshell";
    s.tool = "haptic-pointshell";
    s.description = "surface points about alpha voxels apart with inward normals";
    s.output_name = "pointshell.hps";
    s.produces = "pointshell";
    s.needs = {"distance|voxelmap"};  // FIELD: the distance field when the pipeline makes one
    s.available = true;
    Declare<PointshellParams> d(s.params);
    d(&PointshellParams::alpha, "alpha", "minimum spacing in voxel sizes").above_zero();
    const std::vector<nlohmann::json> normals(kShellNormalsNames.begin(), kShellNormalsNames.end());
    d(&PointshellParams::normals, "normals",
      strf("%s (of the distance field) or %s (angle-weighted)", shell_normals_name(ShellNormals::gradient),
           shell_normals_name(ShellNormals::surface)))
        .one_of(normals);
    d(&PointshellParams::force, "force", "proceed even if the mesh is not the one the field was made from");
    declare_mesh_options(d, " (default: the field's)");
    s.run = typed_run("pointshell", &run_pointshell);
    return s;
}

nlohmann::json to_json(const PointshellSummary& s) {
    nlohmann::json j = s.statistics;
    j["grid"] = {{"origin", s.origin}, {"voxel_size", s.grid.voxel_size}, {"dims", s.grid.dims}};
    j["alpha"] = s.alpha;
    // The spacing and the coverage in units of alpha x voxel size, as the text gives them.
    const double as = s.statistics["spacing"]["alpha_s"].get<double>();
    j["spacing"]["min_over_alpha_s"] = s.statistics["spacing"]["min"].get<double>() / as;
    j["spacing"]["median_over_alpha_s"] = s.statistics["spacing"]["median"].get<double>() / as;
    j["coverage"]["max_over_alpha_s"] = s.statistics["coverage"]["max"].get<double>() / as;
    j["normals"] = {{"mode", s.normals_mode}, {"source", s.normal_source}, {"surface_fallbacks", s.surface_fallbacks},
                    {"dropped_no_normal", s.dropped_no_normal}, {"components", s.components},
                    {"inverted_components", s.inverted_components}};
    j["candidates"] = s.candidates;
    j["colours"] = s.colours;
    j["seconds"] = {{"read", s.seconds_read}, {"sample", s.seconds_sample}, {"statistics", s.seconds_statistics},
                    {"write", s.seconds_write}};
    j["warnings"] = s.warnings;
    return j;
}

nlohmann::json to_json(const PointshellSummary& s, const ToolFacts& f) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["mesh"] = to_json(f.mesh->diagnostics);
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const PointshellSummary& s, const ToolFacts& f) {
    const nlohmann::json& st = s.statistics;
    const auto& sp = st["spacing"];
    const auto& cov = st["coverage"];
    const auto& dev = st["normal_deviation_deg"];
    const double as = sp["alpha_s"].get<double>();
    const auto num = [](const nlohmann::json& v) { return v.get<double>(); };
    std::string out = strf("grid         %d x %d x %d voxels, voxel size %.6g\n", s.grid.dims[0], s.grid.dims[1],
                           s.grid.dims[2], s.grid.voxel_size);
    out += strf("points       %s (from %s projected voxel centres, %zu colours)\n",
                with_commas(st["points"].get<std::size_t>()).c_str(), with_commas(s.candidates).c_str(), s.colours);
    out += strf("spacing      nearest neighbour min %.4g (%.2f alpha*s), median %.4g (%.2f alpha*s), alpha*s = %.4g\n",
                num(sp["min"]), num(sp["min"]) / as, num(sp["median"]), num(sp["median"]) / as, as);
    out += strf("coverage     surface to nearest point: max %.4g (%.2f alpha*s), p99 %.4g, %s samples\n", num(cov["max"]),
                num(cov["max"]) / as, num(cov["p99"]), with_commas(cov["samples"].get<std::size_t>()).c_str());
    out += strf("normals      %s, inward; deviation from the triangle's normal median %.2f deg, p95 %.2f deg, max %.1f deg\n",
                s.normal_source.c_str(), num(dev["median"]), num(dev["p95"]), num(dev["max"]));
    if (s.surface_fallbacks || s.inverted_components || s.dropped_no_normal)
        out += strf("             %zu points took the surface normal (weak or outward gradient), %zu of %zu components "
                    "wound inward, %zu candidates without a normal\n",
                    s.surface_fallbacks, s.inverted_components, s.components, s.dropped_no_normal);
    out += strf("time         read %.3f s, sample %.3f s, statistics %.3f s, write %.3f s, total %.3f s\n", s.seconds_read,
                s.seconds_sample, s.seconds_statistics, s.seconds_write, f.total_seconds);
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

PointshellSummary run_pointshell(const StageContext& ctx, const PointshellParams& p) {
    const auto t0 = std::chrono::steady_clock::now();
    // FIELD: the distance field when the pipeline makes one, else the voxelmap.
    const std::filesystem::path field_path =
        ctx.inputs->count("distance") ? ctx.inputs->at("distance") : ctx.inputs->at("voxelmap");
    const double alpha = p.alpha;
    const std::string& normals = p.normals;
    const bool force = p.force;

    vdb::FileInfo info;
    ShellField field = read_shell_field(field_path, info);
    nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
    if (params.is_discarded() || !params.is_object()) params = nlohmann::json::object();
    // The mesh is read with the field's units/scale unless others are given.
    MeshLoadOptions mopt;
    mopt.units = p.units ? *p.units : params.value("units", "");
    mopt.scale = p.scale ? *p.scale : params.value("scale", 1.0);
    mopt.part = part_or(p.part, params);
    tessellation_or(mopt, p, params);
    const LoadedMesh& m = ctx.load_mesh(mopt);
    std::vector<std::string> warnings;
    add_import_notes(warnings, ctx.mesh.string(), m);
    const std::string mismatch = check_source_hash(ctx.mesh.string(), m.source_hash, field_path.string(), "field",
                                                   info.metadata.value("source_hash", ""), force, ctx.option_name("force"));
    if (!mismatch.empty()) warnings.push_back(mismatch);
    const double read_s = seconds_since(t0);

    PointshellOptions opt;
    opt.alpha = alpha;
    opt.normals = parse_shell_normals(normals);
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
    if (!m.part.empty()) meta["parameters"]["part"] = m.part;
    record_tessellation(meta["parameters"], m);
    const auto t3 = std::chrono::steady_clock::now();
    write_shell_file(ctx.output, meta, r.shell);
    const double write_s = seconds_since(t3);

    PointshellSummary out;
    out.statistics = stats;
    out.grid = {g.dims, g.voxel_size};
    out.origin = {g.origin.x, g.origin.y, g.origin.z};
    out.alpha = alpha;
    out.normals_mode = normals;
    out.normal_source = r.normal_source;
    out.surface_fallbacks = r.surface_fallbacks, out.dropped_no_normal = r.dropped_no_normal;
    out.components = r.components, out.inverted_components = r.inverted_components;
    out.candidates = r.candidates, out.colours = r.colours;
    out.seconds_read = read_s, out.seconds_sample = sample_s, out.seconds_statistics = stats_s, out.seconds_write = write_s;
    out.warnings = std::move(warnings);
    return out;
}

}  // namespace hp::pipeline
