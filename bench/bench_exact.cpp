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

// The command line.
struct Options {
    std::string static_path, moving_path, from_s, to_s, slide_s = "0,0,0", voxels_s;
    int steps = 1000, bisect_samples = 16;
    double ratio = 1.4, wobble = 0, cycles = 0;
    int poly_stride = 1;
    double spin = 0;
};

void print_row(const nlohmann::json& j) {
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
}

// The moving mesh's poses: steps + 1 of them from --from to --to (slide, wobble and spin added).
std::vector<hp::exact::RigidPose> trajectory(const Options& o, const hp::TriMesh& moving) {
    const hp::Vec3d from = parse_vec(o.from_s), to = parse_vec(o.to_s), slide = parse_vec(o.slide_s);
    const std::size_t n = static_cast<std::size_t>(o.steps);
    // The placement of the moving mesh's centre (its box centre, about which it turns).
    const hp::Vec3d c = moving.bounds().center();
    std::vector<hp::exact::RigidPose> poses(n + 1);
    for (std::size_t k = 0; k <= n; ++k) {
        const double s = static_cast<double>(k) / static_cast<double>(n);
        poses[k] = hp::exact::pose_from_quaternion(
            {std::cos(0.5 * o.spin * static_cast<double>(k)), 0, 0, std::sin(0.5 * o.spin * static_cast<double>(k))}, {});
        poses[k].t = from + (to - from) * s + slide * std::max(0.0, 2 * s - 1) +
                     hp::normalized(to - from) * (o.wobble * std::sin(2 * std::numbers::pi * o.cycles * s)) + c - poses[k].rotate(c);
    }
    return poses;
}

// The exact answer per step, as haptic-query --validate exact takes a step: the static test at its
// end, and the continuous one when the meshes are apart at its start (else the contact is at 0).
struct ExactSteps {
    std::size_t n = 0;
    std::vector<double> frac;                          // first contact fraction; 2: none in the step
    std::vector<std::uint8_t> start_overlap, end_overlap;
    std::vector<double> step_s;                        // time per step
    double total_s = 0, worst_s = 0;
    std::size_t worst_step = 0, pairs = 0;
};

ExactSteps run_exact(const hp::exact::ExactMesh& fixed, const hp::exact::ExactMesh& moving,
                     const std::vector<hp::exact::RigidPose>& poses) {
    ExactSteps e;
    e.n = poses.size() - 1;
    e.frac.assign(e.n, 2.0);
    e.start_overlap.resize(e.n);
    e.end_overlap.resize(e.n + 1);
    e.step_s.resize(e.n);
    e.end_overlap[0] = hp::exact::meshes_intersect(fixed, moving, poses[0]);
    for (std::size_t k = 0; k < e.n; ++k) {
        e.start_overlap[k] = e.end_overlap[k];
        const auto t0 = Clock::now();
        e.end_overlap[k + 1] = hp::exact::meshes_intersect(fixed, moving, poses[k + 1]);
        hp::exact::StepContact c;
        if (!e.start_overlap[k]) c = hp::exact::move(fixed, moving, poses[k], poses[k + 1]);
        const double dt = since(t0);
        e.total_s += dt;
        e.step_s[k] = dt;
        if (dt > e.worst_s) {
            e.worst_s = dt;
            e.worst_step = k;
        }
        e.pairs += c.pairs_tested;
        if (e.start_overlap[k]) e.frac[k] = 0;
        else if (c.hit) e.frac[k] = c.fraction;
    }
    return e;
}

// Row exact-ccd: the exact steps' times, and their agreement with a bisection over exact static
// tests on the steps that start apart (along the same split path as move()).
void exact_row(const Options& o, const std::string& pair, const hp::exact::ExactMesh& fixed, const hp::exact::ExactMesh& moving,
               const std::vector<hp::exact::RigidPose>& poses, const ExactSteps& e, double build_s) {
    const std::size_t n = e.n;
    std::vector<double> sorted_s = e.step_s;
    std::sort(sorted_s.begin(), sorted_s.end());
    const double p50_s = sorted_s[n / 2], p99_s = sorted_s[std::min(n - 1, n * 99 / 100)];
    std::size_t contact_steps = 0, first_contact_step = n;
    for (std::size_t k = 0; k < n; ++k)
        if (e.frac[k] <= 1) {
            ++contact_steps;
            first_contact_step = std::min(first_contact_step, k);
        }
    std::size_t compared = 0, agree = 0, missed_by_samples = 0, ref_only = 0;
    double max_diff = 0;
    const auto t1 = Clock::now();
    for (std::size_t k = 0; k < n; ++k) {
        if (e.start_overlap[k]) continue;
        const double ref = hp::exact::bisect_first_contact(
            fixed, moving, [&](double s) { return hp::exact::split_path_pose(moving, poses[k], poses[k + 1], s); },
            o.bisect_samples, 1e-12);
        if (e.frac[k] > 1 && ref > 1) continue;
        if (e.frac[k] <= 1 && ref > 1) { ++missed_by_samples; continue; }
        if (e.frac[k] > 1) { ++ref_only; continue; }
        ++compared;
        max_diff = std::max(max_diff, std::fabs(e.frac[k] - ref));
        agree += std::fabs(e.frac[k] - ref) <= 1e-9;
    }
    const double bisect_s = since(t1);
    const double steps = static_cast<double>(n);
    char notes[600];
    std::snprintf(notes, sizeof notes,
                  "%zu steps (%s), contact in %zu (first at step %zu); per step mean %.3f ms, p50 %.3f, p99 %.3f, max %.3f ms (step %zu), %.0f triangle pairs; "
                  "internal edges %zu/%zu and %zu/%zu; vs bisection over exact static tests (%d samples + bisection): "
                  "%zu/%zu agree to 1e-9 (max diff %.2e), %zu exact-only (sampling stepped over), %zu bisection-only",
                  n, o.spin != 0 ? "translation and rotation, split" : "translation", contact_steps, first_contact_step,
                  1e3 * e.total_s / steps, 1e3 * p50_s, 1e3 * p99_s, 1e3 * e.worst_s, e.worst_step,
                  static_cast<double>(e.pairs) / steps, fixed.stats().internal, fixed.stats().edges, moving.stats().internal,
                  moving.stats().edges, o.bisect_samples, agree, compared, max_diff, missed_by_samples, ref_only);
    print_row({{"stage", "exact-ccd"}, {"mesh", pair}, {"seconds", e.total_s}, {"peak_rss", hp::peak_rss_bytes()},
               {"notes", notes}, {"steps", n}, {"contact_steps", contact_steps},
               {"first_fraction", first_contact_step < n ? e.frac[first_contact_step] : 2.0},
               {"ms_per_step", 1e3 * e.total_s / steps}, {"max_ms_per_step", 1e3 * e.worst_s},
               {"p50_ms_per_step", 1e3 * p50_s}, {"p99_ms_per_step", 1e3 * p99_s},
               {"build_seconds", build_s}, {"bisect_agree", agree}, {"bisect_compared", compared},
               {"bisect_max_diff", max_diff}, {"bisect_seconds", bisect_s}, {"exact_only", missed_by_samples},
               {"bisect_only", ref_only}});
}

fcl::Transform3d fcl_transform(const hp::exact::RigidPose& p) {
    fcl::Transform3d t = fcl::Transform3d::Identity();
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) t.linear()(i, j) = p.rows[static_cast<std::size_t>(i)][j];
    t.translation() = fcl::Vector3d(p.t.x, p.t.y, p.t.z);
    return t;
}

// One row peer-fcl-ccd: `call(k, toc)` says whether FCL finds contact in step k (and when), on
// every stride-th step, against ours.
template <class Call>
void fcl_row(const std::string& pair, const std::string& label, std::size_t stride, const ExactSteps& e, Call&& call) {
    std::size_t both = 0, none = 0, ours_only = 0, fcl_only = 0, apart = 0, apart_agree = 0, timed_hits = 0;
    double max_dt = 0, sum_dt = 0, ours_s = 0;
    const std::size_t runs = (e.n + stride - 1) / stride;
    for (std::size_t k = 0; k < e.n; k += stride) ours_s += e.step_s[k];
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < e.n; k += stride) {
        double toc = 0;
        const bool hit = call(k, toc);
        const bool ours = e.frac[k] <= 1;
        both += hit && ours;
        none += !hit && !ours;
        ours_only += ours && !hit;
        fcl_only += hit && !ours;
        if (!e.start_overlap[k]) {
            ++apart;
            apart_agree += hit == ours;
        }
        if (hit && ours && !e.start_overlap[k]) {
            sum_dt += std::fabs(toc - e.frac[k]);
            ++timed_hits;
            max_dt = std::max(max_dt, std::fabs(toc - e.frac[k]));
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
    print_row({{"stage", "peer-fcl-ccd"}, {"mesh", pair}, {"seconds", secs}, {"peak_rss", hp::peak_rss_bytes()},
               {"notes", notes}, {"solver", label}, {"agree", both + none}, {"steps", runs},
               {"ours_only", ours_only}, {"fcl_only", fcl_only}, {"apart_steps", apart},
               {"apart_agree", apart_agree}, {"ratio", secs / ours_s}});
}

// FCL's continuous collision on the same steps: the naive solver at 10 and 100 samples, and the
// polynomial solver (translation only; the model's stored vertices are the step's start pose).
void fcl_rows(const Options& o, const std::string& pair, const hp::TriMesh& sm, const hp::TriMesh& mm,
              const std::vector<hp::exact::RigidPose>& poses, const ExactSteps& e) {
    auto fixed_model = fcl_model(sm, {});
    auto moving_model = fcl_model(mm, {});
    for (int samples : {10, 100}) {
        fcl::ContinuousCollisionRequestd request(static_cast<std::size_t>(samples), 1e-4,
                                                 o.spin != 0 ? fcl::CCDM_LINEAR : fcl::CCDM_TRANS, fcl::GST_LIBCCD,
                                                 fcl::CCDC_NAIVE);
        fcl_row(pair, "naive, " + std::to_string(samples) + " samples", 1, e, [&](std::size_t k, double& toc) {
            fcl::ContinuousCollisionResultd result;
            const fcl::Transform3d a = fcl::Transform3d::Identity();
            fcl::continuousCollide(fixed_model.get(), a, a, moving_model.get(), fcl_transform(poses[k]), fcl_transform(poses[k + 1]),
                                   request, result);
            toc = result.time_of_contact;
            return result.is_collide;
        });
    }
    if (o.spin != 0) return;
    std::vector<fcl::Vector3d> start_v(mm.vertices.size()), fixed_v(sm.vertices.size());
    for (std::size_t i = 0; i < fixed_v.size(); ++i) fixed_v[i] = fcl::Vector3d(sm.vertices[i].x, sm.vertices[i].y, sm.vertices[i].z);
    auto fixed_poly = fcl_model(sm, {});
    auto moving_poly = fcl_model(mm, {});
    fcl::ContinuousCollisionRequestd request(10, 1e-4, fcl::CCDM_TRANS, fcl::GST_LIBCCD, fcl::CCDC_POLYNOMIAL_SOLVER);
    const std::string label = o.poly_stride > 1 ? "polynomial, every " + std::to_string(o.poly_stride) + "th step" : "polynomial";
    fcl_row(pair, label, static_cast<std::size_t>(o.poly_stride), e, [&](std::size_t k, double& toc) {
        for (std::size_t i = 0; i < start_v.size(); ++i) {
            const hp::Vec3d p = poses[k].apply(mm.vertices[i]);
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

std::vector<double> parse_list(const std::string& text) {
    std::vector<double> values;
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t comma = text.find(',', pos);
        values.push_back(std::stod(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
        pos = comma == std::string::npos ? text.size() : comma + 1;
    }
    return values;
}

// Rows exact-vps-score: VPS at each step's end, for each static voxel size, against the exact
// answer (the definitions of haptic-query --validate exact, query/validate_exact.hpp), with the
// vertex penetration depth of the late steps (exact/penetration.hpp, once per step for all sizes).
void vps_rows(const Options& o, const std::string& pair, const hp::LoadedMesh& sm, const hp::LoadedMesh& mm,
              const hp::exact::ExactMesh& fixed, const hp::exact::ExactMesh& moving, const ExactSteps& e,
              const std::vector<hp::exact::RigidPose>& poses) {
    const std::size_t n = e.n;
    const hp::exact::PenetrationDepth penetration(fixed, moving);
    std::vector<hp::exact::Penetration> depth_at(n + 1);
    std::vector<std::uint8_t> depth_done(n + 1);
    auto vps_pose = [&](std::size_t k) {
        const double a = 0.5 * o.spin * static_cast<double>(k);
        return hp::Pose{poses[k].t, {std::cos(a), 0, 0, std::sin(a)}};
    };
    for (double s : parse_list(o.voxels_s)) {
        hp::bench::Field sf = hp::bench::make_field(sm.mesh, sm.diagnostics.bbox, s);
        hp::bench::Field mf = hp::bench::make_field(mm.mesh, mm.diagnostics.bbox, s * o.ratio);
        hp::DistanceSampler field(sf.grid, std::move(sf.distance));
        hp::PointshellResult ps = hp::sample_pointshell(mm.mesh, {mf.grid, std::move(mf.layers), std::move(mf.distance)}, {});
        hp::PointSphereTree tree = hp::build_point_sphere_tree(ps.shell.points, {.k = 4});
        hp::MovingObject mo{ps.shell.points, ps.shell.normals, &tree};
        hp::VpsQuery vps(field, mo, {.mode = hp::QueryMode::full});
        std::size_t early = 0, late = 0, tunnel = 0, vps_contact = 0, late_vertex = 0;
        double late_depth_max = 0;
        bool prev_v = !vps(vps_pose(0)).contacts.empty();
        for (std::size_t k = 0; k < n; ++k) {
            const bool v = !vps(vps_pose(k + 1)).contacts.empty();
            vps_contact += v;
            const bool touch_now = e.frac[k] <= 1;
            if (v && !touch_now && !e.end_overlap[k + 1]) ++early;
            if (!v && e.end_overlap[k + 1]) {
                ++late;
                if (!depth_done[k + 1]) {
                    depth_at[k + 1] = penetration(poses[k + 1]);
                    depth_done[k + 1] = 1;
                }
                const hp::exact::Penetration& pd = depth_at[k + 1];
                late_vertex += pd.vertices_inside > 0;
                late_depth_max = std::max(late_depth_max, pd.depth);
            }
            if (touch_now && !e.start_overlap[k] && !e.end_overlap[k + 1] && !v && !prev_v) ++tunnel;
            prev_v = v;
        }
        char notes[512];
        std::snprintf(notes, sizeof notes,
                      "VPS full K=4, field @%g, shell @%g (%zu pts) at each step's end vs exact: %zu steps with VPS contact; "
                      "early %zu (VPS contact before the meshes touch), late %zu (meshes overlap, VPS none; %zu with a "
                      "vertex inside, deepest %.3g), tunnelling %zu",
                      s, s * o.ratio, ps.shell.points.size(), vps_contact, early, late, late_vertex, late_depth_max, tunnel);
        print_row({{"stage", "exact-vps-score"}, {"mesh", pair}, {"seconds", 0.0}, {"peak_rss", hp::peak_rss_bytes()},
                   {"notes", notes}, {"voxel", s}, {"early", early}, {"late", late}, {"tunnel", tunnel},
                   {"late_with_vertex_inside", late_vertex}, {"late_depth_max", late_depth_max},
                   {"vps_contact_steps", vps_contact}});
    }
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool("bench_exact", "Exact continuous contact on a trajectory next to bisection, FCL and VPS (make bench).",
                       "Example:\n  bench_exact block-with-hole.stl peg.stl --from 1,0,25 --to 1,0,10 --slide 0.5,0,0\n");
    Options o;
    tool.cli.add_option("STATIC", o.static_path)->required();
    tool.cli.add_option("MOVING", o.moving_path)->required();
    tool.cli.add_option("--from", o.from_s)->required();
    tool.cli.add_option("--to", o.to_s)->required();
    tool.cli.add_option("--slide", o.slide_s);
    tool.cli.add_option("--steps", o.steps);
    tool.cli.add_option("--voxels", o.voxels_s, "static voxel sizes for the VPS rows, comma-separated");
    tool.cli.add_option("--moving-voxel-ratio", o.ratio);
    tool.cli.add_option("--bisect-samples", o.bisect_samples);
    tool.cli.add_option("--wobble", o.wobble, "amplitude of a back-and-forth motion along the approach (world units)");
    tool.cli.add_option("--cycles", o.cycles, "number of back-and-forth cycles over the trajectory");
    tool.cli.add_option("--spin", o.spin, "rotation about z per step (radians): steps then turn and translate (split as docs/exact.md says)");
    tool.cli.add_option("--poly-stride", o.poly_stride, "FCL's polynomial solver on every S-th step only (it refits both models per call)")
        ->check(CLI::PositiveNumber);
    return tool.run(argc, argv, [&] {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        const hp::LoadedMesh sm = hp::load_mesh(o.static_path);
        const hp::LoadedMesh mm = hp::load_mesh(o.moving_path);
        const std::vector<hp::exact::RigidPose> poses = trajectory(o, mm.mesh);
        auto name = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
        const std::string pair = name(o.static_path) + (name(o.moving_path) == name(o.static_path) ? " x2" : " vs " + name(o.moving_path));
        const auto tb = Clock::now();
        const hp::exact::ExactMesh fixed(sm.mesh), moving(mm.mesh);
        const double build_s = since(tb);
        const ExactSteps e = run_exact(fixed, moving, poses);
        exact_row(o, pair, fixed, moving, poses, e, build_s);
        fcl_rows(o, pair, sm.mesh, mm.mesh, poses, e);
        vps_rows(o, pair, sm, mm, fixed, moving, e, poses);
        return 0;
    });
}
