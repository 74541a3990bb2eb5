// bench_exact STATIC_MESH MOVING_MESH --from x,y,z --to x,y,z [--slide x,y,z] [--steps N]
//             [--voxels S1,S2] [--moving-voxel-ratio R] [--bisect-samples K]
// The exact continuous contact (lib/exact) on a 1 kHz trajectory, scored three ways in one run:
//  exact   per step, the first contact fraction of the translation from pose k-1 to pose k
//          (fraction 0 when the meshes already overlap at the step's start); time per step;
//  bisect  the same fraction from K samples of the exact static test (meshes_intersect) and a
//          bisection of the first interval that ends in contact to 1e-12: agreement to 1e-9;
//  fcl     FCL's continuousCollide between two BVHModel<OBBRSS> on the same steps: the naive
//          solver (10 and 100 samples, the poses as begin/end transforms) and the polynomial
//          solver (translation only: the moving model's vertices are rewritten to the step's start
//          pose before each call, since it adds the velocity to the stored vertices); contact or
//          not in the step against ours, and time per step;
//  vps     for each static voxel size S (the moving shell at S x R): VPS at each step's end against
//          the exact answer: early (VPS contact, the meshes have not touched by the step's end),
//          late (the meshes touched in this step or before, VPS sees no contact yet; with the deepest
//          vertex penetration depth of those steps), tunnelling
//          (the meshes touched within the step and are apart again at its end, VPS sees nothing).
// The moving mesh's placement runs from --from to --to with a sideways --slide added in the second
// half (approach, then slide) and a back-and-forth --wobble along the approach; with --spin it also
// turns about z by that angle per step: ours and the bisection then follow the split path
// (translation, then rotation; docs/exact.md), FCL's naive solver its own interpolation (CCDM_LINEAR)
// between the same poses, and the polynomial solver (translation only) is left out. One JSON line
// per row.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <string>

#include <tbb/global_control.h>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/math/motion/translation_motion.h>
#include <fcl/narrowphase/continuous_collision.h>

#include "bench_field.hpp"
#include "common/tool.hpp"
#include "contact/query.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "exact/exact.hpp"
#include "exact/penetration.hpp"
#include "pointshell/pointshell.hpp"
#include "spheretree/tree.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

hp::Vec3d parse_vec(const std::string& s) {
    hp::Vec3d v;
    if (std::sscanf(s.c_str(), "%lf,%lf,%lf", &v.x, &v.y, &v.z) != 3) hp::fail_usage("expected x,y,z, got '" + s + "'");
    return v;
}

using FclModel = fcl::BVHModel<fcl::OBBRSSd>;
std::shared_ptr<FclModel> fcl_model(const hp::TriMesh& m, const hp::Vec3d& offset) {
    std::vector<fcl::Vector3d> v;
    std::vector<fcl::Triangle> t;
    for (const hp::Vec3d& p : m.vertices) v.emplace_back(p.x + offset.x, p.y + offset.y, p.z + offset.z);
    for (const auto& f : m.triangles) t.emplace_back(f[0], f[1], f[2]);
    auto model = std::make_shared<FclModel>();
    model->beginModel();
    model->addSubModel(v, t);
    model->endModel();
    return model;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_exact", "Exact continuous contact on a trajectory next to bisection, FCL and VPS (make bench).",
                       "Example:\n  bench_exact block-with-hole.stl peg.stl --from 1,0,25 --to 1,0,10 --slide 0.5,0,0\n");
    std::string static_path, moving_path, from_s, to_s, slide_s = "0,0,0", voxels_s;
    int steps = 1000, bisect_samples = 16;
    double ratio = 1.4, wobble = 0, cycles = 0;
    int poly_stride = 1;
    double spin = 0;
    tool.cli.add_option("STATIC", static_path)->required();
    tool.cli.add_option("MOVING", moving_path)->required();
    tool.cli.add_option("--from", from_s)->required();
    tool.cli.add_option("--to", to_s)->required();
    tool.cli.add_option("--slide", slide_s);
    tool.cli.add_option("--steps", steps);
    tool.cli.add_option("--voxels", voxels_s, "static voxel sizes for the VPS rows, comma-separated");
    tool.cli.add_option("--moving-voxel-ratio", ratio);
    tool.cli.add_option("--bisect-samples", bisect_samples);
    tool.cli.add_option("--wobble", wobble, "amplitude of a back-and-forth motion along the approach (world units)");
    tool.cli.add_option("--cycles", cycles, "number of back-and-forth cycles over the trajectory");
    tool.cli.add_option("--spin", spin, "rotation about z per step (radians): steps then turn and translate (split as docs/exact.md says)");
    tool.cli.add_option("--poly-stride", poly_stride, "FCL's polynomial solver on every S-th step only (it refits both models per call)")
        ->check(CLI::PositiveNumber);
    return tool.run(argc, argv, [&] {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        const hp::LoadedMesh sm = hp::load_mesh(static_path);
        const hp::LoadedMesh mm = hp::load_mesh(moving_path);
        const hp::Vec3d from = parse_vec(from_s), to = parse_vec(to_s), slide = parse_vec(slide_s);
        const std::size_t n = static_cast<std::size_t>(steps);
        std::vector<hp::exact::RigidPose> poses(n + 1);
        for (std::size_t k = 0; k <= n; ++k) {
            const double s = static_cast<double>(k) / static_cast<double>(n);
            poses[k] = hp::exact::pose_from_quaternion(
                {std::cos(0.5 * spin * static_cast<double>(k)), 0, 0, std::sin(0.5 * spin * static_cast<double>(k))}, {});
            // The placement of the moving mesh's centre (its box centre, about which it turns).
            const hp::Vec3d c = mm.mesh.bounds().center();
            poses[k].t = from + (to - from) * s + slide * std::max(0.0, 2 * s - 1) +
                         hp::normalized(to - from) * (wobble * std::sin(2 * std::numbers::pi * cycles * s)) + c -
                         poses[k].rotate(c);
        }
        auto name = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
        const std::string pair = name(static_path) + (name(moving_path) == name(static_path) ? " x2" : " vs " + name(moving_path));

        const auto tb = Clock::now();
        const hp::exact::ExactMesh fixed(sm.mesh), moving(mm.mesh);
        const double build_s = since(tb);

        // Exact, per step.
        std::vector<double> frac(n, 2.0);  // 2: no contact in the step
        std::vector<std::uint8_t> start_overlap(n), end_overlap(n + 1);
        end_overlap[0] = hp::exact::meshes_intersect(fixed, moving, poses[0]);
        double exact_s = 0, worst_step_s = 0;
        std::size_t worst_step = 0;
        std::vector<double> step_s(n);
        std::size_t pairs = 0;
        for (std::size_t k = 0; k < n; ++k) {
            // A step as haptic-query --validate exact takes it: the static test at its end, and the
            // continuous one when the meshes are apart at its start (else the contact is at 0).
            start_overlap[k] = end_overlap[k];
            const auto t0 = Clock::now();
            end_overlap[k + 1] = hp::exact::meshes_intersect(fixed, moving, poses[k + 1]);
            hp::exact::StepContact c;
            if (!start_overlap[k]) c = hp::exact::move(fixed, moving, poses[k], poses[k + 1]);
            const double dt = since(t0);
            exact_s += dt;
            step_s[k] = dt;
            if (dt > worst_step_s) {
                worst_step_s = dt;
                worst_step = k;
            }
            pairs += c.pairs_tested;
            if (start_overlap[k]) frac[k] = 0;
            else if (c.hit) frac[k] = c.fraction;
        }
        std::vector<double> sorted_s = step_s;
        std::sort(sorted_s.begin(), sorted_s.end());
        const double p50_s = sorted_s[n / 2], p99_s = sorted_s[std::min(n - 1, n * 99 / 100)];
        std::size_t contact_steps = 0, first_contact_step = n;
        for (std::size_t k = 0; k < n; ++k)
            if (frac[k] <= 1) {
                ++contact_steps;
                first_contact_step = std::min(first_contact_step, k);
            }

        // Bisection over exact static tests on the steps that start apart.
        std::size_t compared = 0, agree = 0, missed_by_samples = 0, ref_only = 0;
        double max_diff = 0;
        const auto t1 = Clock::now();
        for (std::size_t k = 0; k < n; ++k) {
            if (start_overlap[k]) continue;
            // Along the same path as move(): the split into translation and rotation.
            const double ref = hp::exact::bisect_first_contact(
                fixed, moving, [&](double s) { return hp::exact::split_path_pose(moving, poses[k], poses[k + 1], s); },
                bisect_samples, 1e-12);
            if (frac[k] > 1 && ref > 1) continue;
            if (frac[k] <= 1 && ref > 1) { ++missed_by_samples; continue; }
            if (frac[k] > 1) { ++ref_only; continue; }
            ++compared;
            max_diff = std::max(max_diff, std::fabs(frac[k] - ref));
            agree += std::fabs(frac[k] - ref) <= 1e-9;
        }
        const double bisect_s = since(t1);
        {
            char notes[600];
            std::snprintf(notes, sizeof notes,
                          "%zu steps (%s), contact in %zu (first at step %zu); per step mean %.3f ms, p50 %.3f, p99 %.3f, max %.3f ms (step %zu), %.0f triangle pairs; "
                          "internal edges %zu/%zu and %zu/%zu; vs bisection over exact static tests (%d samples + bisection): "
                          "%zu/%zu agree to 1e-9 (max diff %.2e), %zu exact-only (sampling stepped over), %zu bisection-only",
                          n, spin != 0 ? "translation and rotation, split" : "translation", contact_steps, first_contact_step, 1e3 * exact_s / static_cast<double>(n), 1e3 * p50_s, 1e3 * p99_s, 1e3 * worst_step_s, worst_step,
                          static_cast<double>(pairs) / static_cast<double>(n), fixed.stats().internal, fixed.stats().edges,
                          moving.stats().internal, moving.stats().edges, bisect_samples, agree, compared, max_diff,
                          missed_by_samples, ref_only);
            nlohmann::json j{{"stage", "exact-ccd"}, {"mesh", pair}, {"seconds", exact_s}, {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes}, {"steps", n}, {"contact_steps", contact_steps},
                             {"first_fraction", first_contact_step < n ? frac[first_contact_step] : 2.0},
                             {"ms_per_step", 1e3 * exact_s / static_cast<double>(n)}, {"max_ms_per_step", 1e3 * worst_step_s},
                             {"p50_ms_per_step", 1e3 * p50_s}, {"p99_ms_per_step", 1e3 * p99_s},
                             {"build_seconds", build_s}, {"bisect_agree", agree}, {"bisect_compared", compared},
                             {"bisect_max_diff", max_diff}, {"bisect_seconds", bisect_s}, {"exact_only", missed_by_samples},
                             {"bisect_only", ref_only}};
            std::printf("%s\n", j.dump().c_str());
            std::fflush(stdout);
        }

        // FCL on the same steps.
        {
            auto fixed_model = fcl_model(sm.mesh, {});
            auto run_fcl = [&](const std::string& label, std::size_t stride, auto&& call) {
                std::size_t both = 0, none = 0, ours_only = 0, fcl_only = 0, apart = 0, apart_agree = 0, timed_hits = 0;
                double max_dt = 0, sum_dt = 0, ours_s = 0;
                const std::size_t runs = (n + stride - 1) / stride;
                for (std::size_t k = 0; k < n; k += stride) ours_s += step_s[k];
                const auto t0 = Clock::now();
                for (std::size_t k = 0; k < n; k += stride) {
                    double toc = 0;
                    const bool hit = call(k, toc);
                    const bool ours = frac[k] <= 1;
                    both += hit && ours;
                    none += !hit && !ours;
                    ours_only += ours && !hit;
                    fcl_only += hit && !ours;
                    if (!start_overlap[k]) {
                        ++apart;
                        apart_agree += hit == ours;
                    }
                    if (hit && ours && !start_overlap[k]) {
                        sum_dt += std::fabs(toc - frac[k]);
                        ++timed_hits;
                        max_dt = std::max(max_dt, std::fabs(toc - frac[k]));
                    }
                }
                const double secs = since(t0);
                char notes[500];
                std::snprintf(notes, sizeof notes,
                              "FCL continuousCollide %s: agree %zu/%zu steps (both contact %zu, both none %zu; only ours %zu, only FCL %zu; "
                              "of the %zu steps starting apart %zu agree); time of first contact off by max %.3g, mean %.3g of a step; "
                              "%.3f ms per step (%.2fx ours)",
                              label.c_str(), both + none, runs, both, none, ours_only, fcl_only, apart, apart_agree, max_dt,
                              timed_hits ? sum_dt / static_cast<double>(timed_hits) : 0.0, 1e3 * secs / static_cast<double>(runs), secs / ours_s);
                nlohmann::json j{{"stage", "peer-fcl-ccd"}, {"mesh", pair}, {"seconds", secs}, {"peak_rss", hp::peak_rss_bytes()},
                                 {"notes", notes}, {"solver", label}, {"agree", both + none}, {"steps", runs},
                                 {"ours_only", ours_only}, {"fcl_only", fcl_only}, {"apart_steps", apart},
                                 {"apart_agree", apart_agree}, {"ratio", secs / ours_s}};
                std::printf("%s\n", j.dump().c_str());
                std::fflush(stdout);
            };
            auto moving_model = fcl_model(mm.mesh, {});
            for (int samples : {10, 100}) {
                fcl::ContinuousCollisionRequestd request(static_cast<std::size_t>(samples), 1e-4,
                                                         spin != 0 ? fcl::CCDM_LINEAR : fcl::CCDM_TRANS, fcl::GST_LIBCCD,
                                                         fcl::CCDC_NAIVE);
                run_fcl("naive, " + std::to_string(samples) + " samples", 1, [&](std::size_t k, double& toc) {
                    fcl::ContinuousCollisionResultd result;
                    const fcl::Transform3d a = fcl::Transform3d::Identity();
                    fcl::Transform3d b0 = fcl::Transform3d::Identity(), b1 = fcl::Transform3d::Identity();
                    for (int i = 0; i < 3; ++i)
                        for (int j = 0; j < 3; ++j) {
                            b0.linear()(i, j) = poses[k].rows[static_cast<std::size_t>(i)][j];
                            b1.linear()(i, j) = poses[k + 1].rows[static_cast<std::size_t>(i)][j];
                        }
                    b0.translation() = fcl::Vector3d(poses[k].t.x, poses[k].t.y, poses[k].t.z);
                    b1.translation() = fcl::Vector3d(poses[k + 1].t.x, poses[k + 1].t.y, poses[k + 1].t.z);
                    fcl::continuousCollide(fixed_model.get(), a, a, moving_model.get(), b0, b1, request, result);
                    toc = result.time_of_contact;
                    return result.is_collide;
                });
            }
            // Polynomial: translation motions; the model's stored vertices are the start pose.
            std::vector<fcl::Vector3d> start_v(mm.mesh.vertices.size()), fixed_v(sm.mesh.vertices.size());
            for (std::size_t i = 0; i < fixed_v.size(); ++i)
                fixed_v[i] = fcl::Vector3d(sm.mesh.vertices[i].x, sm.mesh.vertices[i].y, sm.mesh.vertices[i].z);
            auto fixed_poly = fcl_model(sm.mesh, {});
            auto moving_poly = fcl_model(mm.mesh, {});
            fcl::ContinuousCollisionRequestd request(10, 1e-4, fcl::CCDM_TRANS, fcl::GST_LIBCCD, fcl::CCDC_POLYNOMIAL_SOLVER);
            if (spin == 0) run_fcl(poly_stride > 1 ? "polynomial, every " + std::to_string(poly_stride) + "th step" : std::string("polynomial"),
                    static_cast<std::size_t>(poly_stride), [&](std::size_t k, double& toc) {
                for (std::size_t i = 0; i < start_v.size(); ++i) {
                    const hp::Vec3d p = poses[k].apply(mm.mesh.vertices[i]);
                    start_v[i] = fcl::Vector3d(p.x, p.y, p.z);
                }
                moving_poly->beginUpdateModel();
                moving_poly->updateSubModel(start_v);
                moving_poly->endUpdateModel(true, true);
                fixed_poly->beginUpdateModel();
                fixed_poly->updateSubModel(fixed_v);
                fixed_poly->endUpdateModel(true, true);
                const hp::Vec3d d = poses[k + 1].t - poses[k].t;
                const fcl::Transform3d id = fcl::Transform3d::Identity();
                fcl::Transform3d end = id;
                end.translation() = fcl::Vector3d(d.x, d.y, d.z);
                fcl::TranslationMotion<double> still(id, id), motion(id, end);
                fcl::ContinuousCollisionResultd result;
                fcl::continuousCollideBVHPolynomial(fixed_poly.get(), &still, moving_poly.get(), &motion, request, result);
                toc = result.time_of_contact;
                return result.is_collide;
            });
        }

        // VPS at each step's end, for each voxel size.
        std::vector<double> voxels;
        for (std::size_t pos = 0; pos < voxels_s.size();) {
            const std::size_t comma = voxels_s.find(',', pos);
            voxels.push_back(std::stod(voxels_s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
            pos = comma == std::string::npos ? voxels_s.size() : comma + 1;
        }
        // The vertex penetration depth at the end of each late step (exact/penetration.hpp),
        // computed once per step for all voxel sizes.
        const hp::exact::PenetrationDepth penetration(fixed, moving);
        std::vector<hp::exact::Penetration> depth_at(n + 1);
        std::vector<std::uint8_t> depth_done(n + 1);
        for (double s : voxels) {
            hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, s);
            hp::bench::Field mf = hp::bench::make_field(mm.mesh, mm.diagnostics.bbox, s * ratio);
            hp::DistanceSampler field(sf.grid, std::move(sf.distance));
            hp::PointshellResult ps = hp::sample_pointshell(mm.mesh, {mf.grid, std::move(mf.layers), std::move(mf.distance)}, {});
            hp::PointSphereTree tree = hp::build_point_sphere_tree(ps.shell.points, {.k = 4});
            hp::MovingObject mo{ps.shell.points, ps.shell.normals, &tree};
            hp::VpsQuery vps(field, mo, {.mode = hp::QueryMode::full});
            std::size_t early = 0, late = 0, tunnel = 0, vps_contact = 0, late_vertex = 0;
            double late_depth_max = 0;
            auto vps_pose = [&](std::size_t k) {
                const double a = 0.5 * spin * static_cast<double>(k);
                return hp::Pose{poses[k].t, {std::cos(a), 0, 0, std::sin(a)}};
            };
            bool prev_v = !vps(vps_pose(0)).contacts.empty();
            for (std::size_t k = 0; k < n; ++k) {
                const hp::Pose pose = vps_pose(k + 1);
                const bool v = !vps(pose).contacts.empty();
                vps_contact += v;
                const bool touch_now = frac[k] <= 1;
                // The definitions of haptic-query --validate exact (query/validate_exact.hpp).
                if (v && !touch_now && !end_overlap[k + 1]) ++early;
                if (!v && end_overlap[k + 1]) {
                    ++late;
                    if (!depth_done[k + 1]) {
                        depth_at[k + 1] = penetration(poses[k + 1]);
                        depth_done[k + 1] = 1;
                    }
                    const hp::exact::Penetration& pd = depth_at[k + 1];
                    late_vertex += pd.vertices_inside > 0;
                    late_depth_max = std::max(late_depth_max, pd.depth);
                }
                if (touch_now && !start_overlap[k] && !end_overlap[k + 1] && !v && !prev_v) ++tunnel;
                prev_v = v;
            }
            char notes[512];
            std::snprintf(notes, sizeof notes,
                          "VPS full K=4, field @%g, shell @%g (%zu pts) at each step's end vs exact: %zu steps with VPS contact; "
                          "early %zu (VPS contact before the meshes touch), late %zu (meshes overlap, VPS none; %zu with a "
                          "vertex inside, deepest %.3g), tunnelling %zu",
                          s, s * ratio, ps.shell.points.size(), vps_contact, early, late, late_vertex, late_depth_max, tunnel);
            nlohmann::json j{{"stage", "exact-vps-score"}, {"mesh", pair}, {"seconds", 0.0}, {"peak_rss", hp::peak_rss_bytes()},
                             {"notes", notes}, {"voxel", s}, {"early", early}, {"late", late}, {"tunnel", tunnel},
                             {"late_with_vertex_inside", late_vertex}, {"late_depth_max", late_depth_max},
                             {"vps_contact_steps", vps_contact}};
            std::printf("%s\n", j.dump().c_str());
            std::fflush(stdout);
        }
        return 0;
    });
}
