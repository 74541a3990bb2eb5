// The cfm stage: its declaration (options bound to CfmParams), its body (shared with
// haptic-cfm, which adds its files) and its summary (to_json, format_text).
#include <chrono>
#include <filesystem>

#include "core/clock.hpp"
#include "cfm/cfm.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/cfm.hpp"
#include "formats/shell.hpp"
#include "pipeline/stage_cfm.hpp"

namespace hp::pipeline {


StageSpec cfm_stage() {
    StageSpec s;
    s.name = "cfm";
    s.tool = "haptic-cfm";
    s.description = "closest feature map of every sphere of the tree";
    s.output_name = "cfm.hcfm";
    s.produces = "cfm";
    s.needs = {"tree"};
    s.available = true;
    Declare<CfmParams> d(s.params);
    d(&CfmParams::stacks, "stacks", "stacks at the root").in(cfm::kMinStacks, cfm::kMaxStacks);
    d(&CfmParams::min_stacks, "min_stacks", "stacks at the deepest level (at most the stacks at the root)").in(cfm::kMinStacks, cfm::kMaxStacks);
    std::vector<nlohmann::json> samplings, stores;
    for (const cfm::SamplingName& n : cfm::sampling_names()) samplings.push_back(n.name);
    for (const cfm::StoreName& n : cfm::store_names()) stores.push_back(n.name);
    d(&CfmParams::sampling, "sampling", "adaptive or polar").one_of(samplings);
    d(&CfmParams::store, "store", "normal (normals only) or full (features, points, normals)").one_of(stores);
    d(&CfmParams::force, "force", "proceed even if the mesh is not the one the tree was made from");
    declare_mesh_options(d, " (default: the tree's)");
    s.check = [](const nlohmann::json& p, const Spelling& name) -> std::pair<std::string, std::string> {
        if (p["min_stacks"].get<int>() > p["stacks"].get<int>())
            return {"min_stacks", name("min_stacks") + " " + p["min_stacks"].dump() + " exceeds " + name("stacks") + " " +
                                      p["stacks"].dump() + " (it must not exceed it)"};
        return {};
    };
    s.run = typed_run("cfm", &run_cfm);
    return s;
}

nlohmann::json to_json(const CfmSummary& s) {
    nlohmann::json levels = nlohmann::json::array();
    for (const CfmLevelSummary& l : s.levels)
        levels.push_back({{"level", l.level}, {"stacks", l.stacks}, {"spheres", l.spheres},
                          {"samples_per_sphere", l.samples_per_sphere}, {"single_feature", l.single_feature},
                          {"records", l.records}});
    return {{"tree", {{"spheres", s.spheres}, {"levels", s.tree_levels}}},
            {"sampling", s.sampling}, {"store", s.store}, {"stacks", s.stacks}, {"min_stacks", s.min_stacks},
            {"levels", levels}, {"records", s.records}, {"single_feature_spheres", s.single_feature_spheres},
            {"unique_features", s.unique_features ? nlohmann::json(*s.unique_features) : nlohmann::json()},
            {"seconds", {{"load", s.seconds_load}, {"build", s.seconds_build}, {"write", s.seconds_write}}},
            {"warnings", s.warnings}};
}

nlohmann::json to_json(const CfmSummary& s, const ToolFacts& f, const std::string& tree_file) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["mesh"] = to_json(f.mesh->diagnostics);
    j["tree"]["file"] = tree_file;
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const CfmSummary& s, const ToolFacts& f) {
    std::string out = strf("tree         %s spheres on %d levels\n", with_commas(s.spheres).c_str(), s.tree_levels);
    out += strf("sampling     %s, %d stacks at the root, %d at the deepest level; store %s\n", s.sampling.c_str(), s.stacks,
                s.min_stacks, s.store.c_str());
    out += "level  stacks  samples  spheres  single-feature  records\n";
    for (const CfmLevelSummary& l : s.levels)
        out += strf("%5d  %6d  %7zu  %7zu  %14zu  %7zu\n", l.level, l.stacks, l.samples_per_sphere, l.spheres,
                    l.single_feature, l.records);
    out += strf("records      %s", with_commas(s.records).c_str());
    if (s.unique_features) out += strf(", %s unique features", with_commas(*s.unique_features).c_str());
    out += strf("\ntime         load %.3f s, build %.3f s, write %.3f s, total %.3f s\n", s.seconds_load, s.seconds_build,
                s.seconds_write, f.total_seconds);
    out += strf("memory       peak %s\n", human_bytes(static_cast<double>(f.peak_rss_bytes)).c_str());
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

CfmSummary run_cfm(const StageContext& ctx, const CfmParams& p) {
    const auto t_start = std::chrono::steady_clock::now();
    const std::filesystem::path tree_path = ctx.inputs->at("tree");
    cfm::Options opt;
    opt.stacks = p.stacks;
    opt.min_stacks = p.min_stacks;
    const std::string& sampling = p.sampling;
    const std::string& store = p.store;
    const bool force = p.force;
    opt.sampling = cfm::parse_sampling(sampling);
    opt.store = cfm::parse_store(store);

    ShellFile shell = read_shell_file(tree_path, /*require_tree=*/true);
    nlohmann::json params = shell.metadata.value("parameters", nlohmann::json::object());
    if (params.is_string()) params = nlohmann::json::parse(params.get<std::string>(), nullptr, false);
    if (!params.is_object()) params = nlohmann::json::object();
    // The mesh is read with the tree's units/scale unless the stage gives others.
    MeshLoadOptions mopt;
    if (p.units) mopt.units = *p.units;
    else if (params.contains("units") && params["units"].is_string()) mopt.units = params["units"].get<std::string>();
    if (p.scale) mopt.scale = *p.scale;
    else if (params.contains("scale") && params["scale"].is_number()) mopt.scale = params["scale"].get<double>();
    mopt.part = part_or(p.part, params);
    tessellation_or(mopt, p, params);
    const LoadedMesh& m = ctx.load_mesh(mopt);
    std::vector<std::string> warnings;
    add_import_notes(warnings, ctx.mesh.string(), m);
    const std::string recorded = shell.metadata.value("source_hash", "");
    const std::string mismatch =
        check_source_hash(ctx.mesh.string(), m.source_hash, tree_path.string(), "tree", recorded, force, ctx.option_name("force"));
    if (!mismatch.empty()) warnings.push_back(mismatch);
    if (m.diagnostics.orientation == "inward") opt.outward_sign = -1;
    if (m.diagnostics.orientation == "mixed")
        warnings.push_back(ctx.mesh.string() + ": triangles are not consistently oriented; normals follow each triangle's winding");

    const double load_s = seconds_since(t_start);
    const auto t_build = std::chrono::steady_clock::now();
    const cfm::ClosestFeatureMap map = cfm::build_cfm(m.mesh, *shell.tree, opt, ctx.progress);
    const double build_s = seconds_since(t_build);
    nlohmann::json meta{{"kind", "cfm"}, {"tool", "haptic-cfm"}, {"tool_version", kVersion},
                        {"source_name", m.source_name}, {"source_hash", m.source_hash}, {"units", m.units},
                        {"tree", tree_path.filename().string()},
                        {"tree_source_hash", recorded},
                        {"parameters", {{"stacks", opt.stacks}, {"min_stacks", opt.min_stacks}, {"sampling", sampling},
                                        {"store", store}, {"units", mopt.units}, {"scale", mopt.scale}}},
                        {"normal_orientation", opt.outward_sign < 0 ? "outward (mesh wound inward, flipped)" : "outward"},
                        {"feature_index", "face: triangle; edge: 3t+i of the lowest triangle t with it; vertex: vertex"}};
    if (!m.part.empty()) meta["parameters"]["part"] = m.part;
    record_tessellation(meta["parameters"], m);
    const auto t_write = std::chrono::steady_clock::now();
    write_cfm_file(ctx.output, meta, map);
    const double write_s = seconds_since(t_write);

    const auto stats = cfm::level_stats(map);
    CfmSummary r;
    for (const auto& s : stats) {
        r.levels.push_back({s.level, s.stacks, s.spheres, s.samples_per_sphere, s.single_feature, s.records});
        r.single_feature_spheres += s.single_feature;
    }
    r.spheres = map.spheres.size();
    r.tree_levels = map.levels;
    r.sampling = sampling, r.store = store;
    r.stacks = opt.stacks, r.min_stacks = opt.min_stacks;
    r.records = map.records();
    if (opt.store == cfm::Store::full) r.unique_features = cfm::unique_features(map);
    r.seconds_load = load_s, r.seconds_build = build_s, r.seconds_write = write_s;
    r.warnings = std::move(warnings);
    return r;
}

}  // namespace hp::pipeline
