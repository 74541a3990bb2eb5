// The cfm stage: the body of haptic-cfm (apps/haptic-cfm.cpp parses its options and calls this).
#include <chrono>
#include <filesystem>

#include "core/clock.hpp"
#include "cfm/cfm.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/cfm.hpp"
#include "formats/shell.hpp"
#include "pipeline/stage_runs.hpp"

namespace hp::pipeline {


nlohmann::json run_cfm(const StageContext& ctx) {
    const auto t_start = std::chrono::steady_clock::now();
    const nlohmann::json& p = ctx.params;
    const std::filesystem::path tree_path = ctx.inputs->at("tree");
    cfm::Options opt;
    opt.stacks = p.at("stacks").get<int>();
    opt.min_stacks = p.at("min_stacks").get<int>();
    const std::string sampling = p.at("sampling").get<std::string>();
    const std::string store = p.at("store").get<std::string>();
    const bool force = p.at("force").get<bool>();
    opt.sampling = sampling == "polar" ? cfm::Sampling::polar : cfm::Sampling::adaptive;
    opt.store = store == "full" ? cfm::Store::full : cfm::Store::normal;
    if (opt.min_stacks > opt.stacks)
        fail_usage(ctx.option_name("min_stacks") + " " + std::to_string(opt.min_stacks) + " exceeds " +
                   ctx.option_name("stacks") + " " + std::to_string(opt.stacks));

    ShellFile shell = read_shell_file(tree_path, /*require_tree=*/true);
    nlohmann::json params = shell.metadata.value("parameters", nlohmann::json::object());
    if (params.is_string()) params = nlohmann::json::parse(params.get<std::string>(), nullptr, false);
    if (!params.is_object()) params = nlohmann::json::object();
    // The mesh is read with the tree's units/scale unless the stage gives others.
    MeshLoadOptions mopt;
    if (!p.at("units").is_null()) mopt.units = p.at("units").get<std::string>();
    else if (params.contains("units") && params["units"].is_string()) mopt.units = params["units"].get<std::string>();
    if (!p.at("scale").is_null()) mopt.scale = p.at("scale").get<double>();
    else if (params.contains("scale") && params["scale"].is_number()) mopt.scale = params["scale"].get<double>();
    const LoadedMesh& m = ctx.load_mesh(mopt);
    nlohmann::json warnings = nlohmann::json::array();
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
    const auto t_write = std::chrono::steady_clock::now();
    write_cfm_file(ctx.output, meta, map);
    const double write_s = seconds_since(t_write);

    const auto stats = cfm::level_stats(map);
    nlohmann::json levels = nlohmann::json::array();
    std::size_t singles = 0;
    for (const auto& s : stats) {
        levels.push_back({{"level", s.level}, {"stacks", s.stacks}, {"spheres", s.spheres},
                          {"samples_per_sphere", s.samples_per_sphere}, {"single_feature", s.single_feature},
                          {"records", s.records}});
        singles += s.single_feature;
    }
    return {{"tree", {{"spheres", map.spheres.size()}, {"levels", map.levels}}},
            {"sampling", sampling}, {"store", store}, {"stacks", opt.stacks}, {"min_stacks", opt.min_stacks},
            {"levels", levels}, {"records", map.records()}, {"single_feature_spheres", singles},
            {"unique_features", opt.store == cfm::Store::full ? nlohmann::json(cfm::unique_features(map)) : nlohmann::json()},
            {"seconds", {{"load", load_s}, {"build", build_s}, {"write", write_s}}},
            {"warnings", warnings}};
}

}  // namespace hp::pipeline
