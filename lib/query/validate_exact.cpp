#include "query/validate_exact.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "core/error.hpp"
#include "exact/exact.hpp"
#include "exact/penetration.hpp"
#include "mesh/mesh.hpp"
#include "query/scenario.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"

namespace hp {

ExactValidation run_exact_validation(const ExactValidationSpec& spec, const Progress& progress) {
    if (spec.static_mesh_path.empty() || spec.moving_mesh_path.empty())
        fail_usage("validating against the exact contact needs both meshes (--static-mesh and --moving-mesh)");
    if (!spec.poses.given()) fail_usage("give poses (a trajectory file) or a scenario (trajectory)");
    auto name = [&](const std::filesystem::path& p) { return spec.file_names_only ? p.filename().string() : p.string(); };
    StaticField st = load_static_field(spec.static_path);
    MovingObjectData shell = load_moving_object(spec.moving_path);
    const MovingObject moving = shell.view();
    const LoadedMesh sm = load_mesh(spec.static_mesh_path);
    const LoadedMesh mm = load_mesh(spec.moving_mesh_path);

    ExactValidation out;
    // The meshes should be those the field and the tree were made from (their recorded hashes).
    auto same_source = [&](const LoadedMesh& m, const std::filesystem::path& mesh_path, const nlohmann::json& meta,
                           const std::filesystem::path& file) {
        const std::string recorded = meta.is_object() ? meta.value("source_hash", std::string()) : std::string();
        if (!recorded.empty() && recorded != m.source_hash)
            out.warnings.push_back(name(mesh_path) + ": not the mesh " + name(file) + " was made from (hash " + m.source_hash +
                                   ", the file records " + recorded + "); the exact contact is that of the meshes given");
    };
    same_source(sm, spec.static_mesh_path, st.metadata, spec.static_path);
    same_source(mm, spec.moving_mesh_path, shell.metadata, spec.moving_path);
    out.poses = check_poses(spec.poses, st.field, moving, progress).poses;
    const std::size_t n = out.poses.size();
    if (n < 2) fail_usage("a trajectory needs at least two poses (one step)");

    const exact::ExactMesh fixed(sm.mesh), mover(mm.mesh);
    std::unique_ptr<exact::PenetrationDepth> penetration;  // built at the first late step
    std::vector<exact::RigidPose> rp(n);
    for (std::size_t k = 0; k < n; ++k) rp[k] = exact::pose_from_quaternion(out.poses[k].quaternion, out.poses[k].position);
    VpsQuery vps(st.field, moving, {.mode = QueryMode::full});

    const double far = sm.diagnostics.bbox.diagonal() + mm.diagnostics.bbox.diagonal();
    nlohmann::json early = nlohmann::json::array(), late = nlohmann::json::array(), tunnel = nlohmann::json::array();
    std::size_t contact_steps = 0, vps_steps = 0, agree = 0;
    double exact_s = 0;
    bool prev_overlap = exact::meshes_intersect(fixed, mover, rp[0]);
    bool prev_vps = !vps(out.poses[0]).contacts.empty();
    nlohmann::json first = nullptr;
    double travel = 0;  // since the meshes first touched (reset when they are apart at a sample)
    for (std::size_t k = 1; k < n; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        double fraction = 2;
        if (prev_overlap) {
            fraction = 0;
        } else {
            const exact::StepContact c = exact::move(fixed, mover, rp[k - 1], rp[k]);
            if (c.hit) fraction = c.fraction;
        }
        const bool overlap = exact::meshes_intersect(fixed, mover, rp[k]);
        exact_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const QueryResult& r = vps(out.poses[k]);
        const bool v = !r.contacts.empty();
        const bool touched = fraction <= 1;
        contact_steps += touched;
        if (touched && first.is_null()) first = {{"step", k}, {"fraction", fraction}};
        vps_steps += v;
        agree += v == overlap;
        const double step_len = length(rp[k].apply(mover.center()) - rp[k - 1].apply(mover.center()));
        if (touched) travel += step_len * (1 - fraction);
        if (v && !touched && !overlap)
            early.push_back({{"step", k}, {"distance", exact::mesh_distance(fixed, mover, rp[k], far)},
                             {"vps_max_penetration", r.max_penetration}});
        if (!v && overlap) {
            // The vertex depth (a lower bound on the translational penetration depth); when no
            // vertex is inside (edges crossing faces only), the path length is all there is.
            if (!penetration) penetration = std::make_unique<exact::PenetrationDepth>(fixed, mover);
            const exact::Penetration pd = (*penetration)(rp[k]);
            late.push_back({{"step", k},
                            {"penetration_depth", pd.depth},
                            {"depth_from", pd.vertices_inside > 0 ? "vertex" : "none (edges only)"},
                            {"vertices_inside", pd.vertices_inside},
                            {"travel_since_touch", travel}});
        }
        if (touched && !prev_overlap && !overlap && !v && !prev_vps) tunnel.push_back({{"step", k}, {"fraction", fraction}});
        if (!overlap) travel = 0;
        prev_overlap = overlap;
        prev_vps = v;
        if (k % 64 == 0) progress.report("steps", static_cast<double>(k) / static_cast<double>(n - 1));
    }
    out.early = early.size();
    out.late = late.size();
    out.tunnel = tunnel.size();
    out.pass = !(spec.fail_on_tunnel && out.tunnel > 0);
    const std::size_t steps = n - 1;
    nlohmann::json poses_json = spec.poses.file.empty()
                                    ? nlohmann::json{{"scenario", spec.poses.scenario}, {"seed", spec.poses.seed}, {"count", spec.poses.count}}
                                    : nlohmann::json{{"file", name(spec.poses.file)}};
    out.report = {
        {"validate", kValidateExact},
        {"steps", steps},
        {"poses", poses_json},
        {"static", {{"file", name(spec.static_path)}, {"voxel_size", st.field.grid().voxel_size}}},
        {"moving", {{"file", name(spec.moving_path)}, {"points", shell.points.size()}}},
        {"static_mesh", {{"file", name(spec.static_mesh_path)}, {"triangles", sm.mesh.triangles.size()},
                         {"internal_edges", fixed.stats().internal}, {"edges", fixed.stats().edges}}},
        {"moving_mesh", {{"file", name(spec.moving_mesh_path)}, {"triangles", mm.mesh.triangles.size()},
                         {"internal_edges", mover.stats().internal}, {"edges", mover.stats().edges}}},
        {"exact_contact_steps", contact_steps},
        {"first_contact", first},
        {"vps_contact_steps", vps_steps},
        {"agree_at_samples", agree},
        {"exact_ms_per_step", 1e3 * exact_s / static_cast<double>(steps)},
        {"early", {{"count", out.early}, {"steps", early}}},
        {"late", {{"count", out.late}, {"steps", late}}},
        {"tunnelling", {{"count", out.tunnel}, {"steps", tunnel}}},
        {"fail_on_tunnel", spec.fail_on_tunnel},
        {"pass", out.pass}};
    return out;
}

std::string format_exact_validation(const ExactValidation& v, std::size_t rows) {
    const nlohmann::json& r = v.report;
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "steps        %zu (exact contact in %zu, VPS contact at %zu step ends; agree at %zu samples)\n",
                  r["steps"].get<std::size_t>(), r["exact_contact_steps"].get<std::size_t>(),
                  r["vps_contact_steps"].get<std::size_t>(), r["agree_at_samples"].get<std::size_t>());
    out += line;
    std::snprintf(line, sizeof line, "exact        %.3f ms per step\n", r["exact_ms_per_step"].get<double>());
    out += line;
    std::snprintf(line, sizeof line, "%-12s %6s  %s\n", "kind", "step", "measure");
    out += line;
    auto list = [&](const char* kind, const char* key, const char* what) {
        const auto& steps = r[kind]["steps"];
        for (std::size_t i = 0; i < std::min(rows, steps.size()); ++i) {
            std::snprintf(line, sizeof line, "%-12s %6zu  %s %.6g\n", kind, steps[i]["step"].get<std::size_t>(), what,
                          steps[i][key].get<double>());
            out += line;
        }
        if (steps.size() > rows) {
            std::snprintf(line, sizeof line, "%-12s %6s  (%zu more in --json)\n", kind, "...", steps.size() - rows);
            out += line;
        }
    };
    list("early", "distance", "true distance");
    {
        const auto& steps = r["late"]["steps"];
        for (std::size_t i = 0; i < std::min(rows, steps.size()); ++i) {
            const auto& e = steps[i];
            if (e["vertices_inside"].get<std::size_t>() > 0)
                std::snprintf(line, sizeof line, "%-12s %6zu  penetration depth %.6g (path since touch %.6g)\n", "late",
                              e["step"].get<std::size_t>(), e["penetration_depth"].get<double>(),
                              e["travel_since_touch"].get<double>());
            else
                std::snprintf(line, sizeof line, "%-12s %6zu  no vertex inside (edges cross): path since touch %.6g\n",
                              "late", e["step"].get<std::size_t>(), e["travel_since_touch"].get<double>());
            out += line;
        }
        if (steps.size() > rows) {
            std::snprintf(line, sizeof line, "%-12s %6s  (%zu more in --json)\n", "late", "...", steps.size() - rows);
            out += line;
        }
    }
    list("tunnelling", "fraction", "touched at fraction");
    std::snprintf(line, sizeof line, "counts       early %zu, late %zu, tunnelling %zu\n", v.early, v.late, v.tunnel);
    out += line;
    std::snprintf(line, sizeof line, "result       %s\n", v.pass ? "PASS" : "FAIL (tunnelling)");
    out += line;
    return out;
}

}  // namespace hp
