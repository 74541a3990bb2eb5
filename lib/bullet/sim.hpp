#pragma once
// lib/bullet/sim — scenes for haptic-sim: objects dropped onto a ground in Bullet, each run with one
// collision method per object (VPS, GImpact, GJK on a convex hull, GJK on an HACD convex
// decomposition, Bullet's native primitives), and per step the narrow phase's time, the contacts,
// the motion, the kinetic energy and the exact penetration computed from the objects' own geometry
// (Sagardia et al. 2014, section 4). The scene file format: docs/sim.md. No Bullet header here.
//
// load_scene() validates everything before any run (keys, types, finite numbers, files that must
// exist) and throws hp::Error(bad_input) "SCENE: KEY: what is wrong". run_scene() steps one
// btDiscreteDynamicsWorld per run (method variant x initial rotation x rate x restitution), one
// thread, deterministic apart from the times.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bullet/vps.hpp"
#include "math/vec.hpp"

namespace hp::bullet {

enum class Method { vps, gimpact, hull, hacd, native };
const char* method_name(Method m);

// How a VPS object's files are made when the scene does not give them: a pipeline file (voxelize,
// distance, pointshell, spheretree) with --set overrides, run on the object's mesh.
struct PrepareSpec {
    std::filesystem::path pipeline;
    std::vector<std::string> set;  // "stage.key=value"
    std::filesystem::path mesh;    // the mesh to prepare (default: the object's; e.g. a coarser one)
};

// How one object collides: the object's own "method", or a run variant of the scene's "methods".
struct MethodSpec {
    std::string name;    // the run's label (variants), else the method's name
    std::string object;  // the object it applies to (variants)
    Method method = Method::native;
    // vps: the files (field, tree), or how to prepare them; and the traversal.
    std::filesystem::path field, tree;
    std::optional<PrepareSpec> prepare;
    AlgorithmOptions traversal;
    // gimpact, hull, hacd: Bullet's collision margin (m); hacd: the decomposition's parameters
    // (Mamou & Ghorbel's HACD as in Bullet's extras: clusters, vertices per hull, concavity).
    double margin = 0.001;
    int clusters = 8;
    int max_vertices = 100;
    double concavity = 100;
    int max_count = 0;  // variants of a multibody scene: run only up to this many copies (0: all)
};

// Copies of one object (a multibody scene): `count` of them (an array: one run per count), laid
// out from the object's position in a grid (ceil(cbrt N) per side, layer by layer upward, each
// turned about its centre of mass by the i-th random rotation of `seed` when `rotate`) or in a
// column (upward, no rotation: a stack). Copy i is named "<name>#i" (1-based).
struct Copies {
    std::vector<int> counts;
    enum class Layout { grid, column } layout = Layout::grid;
    double spacing = 0;  // m between neighbours' centres; 0: 1.2 x the object's bounding diameter
    bool rotate = true;
    std::uint64_t seed = 1;
};

struct SceneObject {
    std::string name;
    // The object's analytic shape, if it has one: plane (static only), box, sphere. Else "mesh".
    enum class Shape { mesh, plane, box, sphere } shape = Shape::mesh;
    Vec3d normal{0, 0, 1};  // plane: normal . x = offset
    double offset = 0;
    Vec3d half_extents;     // box
    double radius = 0;      // sphere
    std::filesystem::path mesh;  // the mesh (required for gimpact, hull, hacd; vps without it: no exact penetration)
    double scale = 1;
    std::string units;           // the mesh's units ("": as in the file), as MeshLoadOptions
    std::string part;            // one part of an assembly file ("@G", as MeshLoadOptions), "": all of it
    std::string group;           // the object the copy was made from ("": itself); variants apply to a group
    // Pose of the mesh (or the shape's centre): world point = R p + t, R from the unit quaternion
    // (w, x, y, z). With origin "center_of_mass", `position` is where the centre of mass goes.
    Vec3d position;
    std::array<double, 4> quaternion{1, 0, 0, 0};
    bool position_is_center_of_mass = false;
    double mass = 0;  // 0: static
    double restitution = 0;
    double friction = 0.5;
    MethodSpec method;
    std::optional<Copies> copies;
};

struct Scene {
    std::filesystem::path file;
    std::string name, description;
    Vec3d gravity{0, 0, -9.81};
    std::vector<double> rates{200};  // Hz; several: one run per rate
    int steps = 600;
    int window_first = 1, window_last = 0;  // steps averaged in the summary (1-based, inclusive; 0: the last)
    bool deactivation = false;              // Bullet's sleeping of resting bodies
    int rotations = 0;                      // seeded random initial rotations of the dynamic objects (0: none)
    std::uint64_t rotation_seed = 1;
    std::vector<double> restitutions;       // sweep: the dynamic objects' restitution (empty: as given)
    std::vector<SceneObject> objects;
    std::vector<MethodSpec> methods;        // run variants; empty: one run with the objects' own methods
    int pile_every = 1;                     // the pile's penetrations between moving bodies every this many steps (and the last)
    std::string source_kind = "sim";        // "sim": a haptic-sim scene file; "assembly": a scene.json
};

// Reads and validates a scene file. Relative paths are relative to the scene file's folder.
Scene load_scene(const std::filesystem::path& file);

// The counts of the scene's copies (one run per count): {0} when no object has copies. At most one
// object has `copies` (load_scene checks it).
std::vector<int> copy_counts(const Scene& scene);
// The scene with the copies of `count` made: the object with `copies` replaced by `count` objects
// "<name>#i" (group <name>), placed by the layout. Needs each copied object's centre of mass in
// its mesh frame (`center_of_mass`, by object index) to turn copies about it.
Scene expand_copies(const Scene& scene, int count, const std::vector<Vec3d>& center_of_mass,
                    const std::vector<double>& bounding_diameter);

// A dynamic part of a scene.json: its name (or index) and mass (kg).
struct DynamicPart {
    std::string name;
    double mass = 1;
};
// A haptic-sim scene of a scene.json of `haptic-pipeline --assembly` (lib/scene, docs/scene.md):
// every part a VPS object of its geometry's distance field and tree at its placement, static but
// for `dynamic`; gravity -9.81 along z, 200 Hz, 600 steps. The scene's files are verified (present,
// sizes and hashes) for the parts that are used; the assembly's source mesh, when found beside the
// scene or where it was given and unchanged (its hash), gives each part's exact geometry for the
// penetration (else a note says it is not measured). Errors: hp::Error(bad_input) naming the file
// and the part (an unknown part, a failed geometry, a missing or changed file).
Scene scene_from_assembly(const std::filesystem::path& scene_json, const std::vector<DynamicPart>& dynamic,
                          std::vector<std::string>* notes = nullptr);

// What haptic-sim's options change in a scene (docs/sim.md).
struct SceneOverrides {
    std::vector<std::string> dynamic;  // scene.json: the moving parts, NAME or NAME=KG (--dynamic)
    double default_mass = 1;           // kg of a dynamic part without =KG (--mass)
    int steps = 0;                     // > 0: the scene's steps, the summary window clipped to them
    int rotations = -1;                // >= 0: the scene's number of random rotations
    std::vector<int> counts;           // not empty: the counts of copies to run instead of the scene's
    std::string only;                  // not empty: the method variants to run (comma-separated names)
};
// A haptic-sim scene file (load_scene) or a scene.json of haptic-pipeline --assembly
// (scene_from_assembly, its notes to `note`), changed by the overrides. Throws hp::Error(usage)
// for an override that does not apply (--dynamic with a scene file, --count without copies, an
// unknown variant, a bad mass).
Scene load_sim_scene(const std::filesystem::path& path, const SceneOverrides& overrides,
                     const std::function<void(const std::string&)>& note);

// One dynamic object at the end of one step.
struct ObjectStep {
    int contacts = 0;          // contact points of Bullet's manifolds that involve the object
    Vec3d position, velocity;  // centre of mass (m), linear velocity (m/s)
    std::array<double, 4> quaternion{1, 0, 0, 0};  // the mesh frame's rotation in the world (w, x, y, z)
    double kinetic = 0;        // translational + rotational kinetic energy (J)
    double penetration = 0;    // exact depth into the static objects (m; 0 when apart)
    double pile_penetration = 0;  // exact depth into any other object, static or dynamic (m)
};
struct StepRecord {
    double collision_us = 0;           // the narrow phase of the step (dispatchAllCollisionPairs)
    int contacts = 0;                  // the points of all the dispatcher's manifolds after the step
    std::vector<ObjectStep> objects;   // the scene's dynamic objects, in order
};

struct RunResult {
    std::string label;         // the variant's name
    std::string method;        // vps, gimpact, ...
    int rotation = -1;         // index of the random rotation, -1 for none
    double rate = 0;
    double restitution = -1;   // the sweep's value, -1 for none
    std::size_t points = 0;    // vps: pointshell points; hull: hull vertices; hacd: hulls' vertices
    std::size_t parts = 0;     // hacd: hulls; gimpact: triangles
    int count = 0;             // the copies of the run (0: the scene has none)
    std::vector<std::string> dynamic_objects;
    std::vector<StepRecord> steps;
    // Over the window: mean and median narrow-phase time, mean contacts of the first dynamic object.
    double mean_collision_us = 0, median_collision_us = 0, mean_contacts = 0;
    double mean_step_contacts = 0;  // over the window: the points of all manifolds (every pair), per step
    // First dynamic object: deepest penetration over all steps and over the window, at the end;
    // the lowest centre of mass height (along the first static plane's or box's up direction, else z);
    // the first step with a contact (0: none); whether its centre of mass ends below the ground.
    double max_penetration = 0, max_penetration_window = 0, final_penetration = 0, lowest_height = 0;
    int first_contact_step = 0;
    bool fell_through = false;
    // Every dynamic object: the deepest exact penetration into any other object, static or dynamic
    // (the pile's), over all steps and at the end; the largest horizontal displacement (across
    // gravity) of a centre of mass from its start, at the end and over all steps (the stack's drift).
    double max_pile_penetration = 0, final_pile_penetration = 0, drift = 0, max_drift = 0;
    double static_moved = 0;  // how far any static object's frame moved (0 unless something is wrong)
    int drift_step = 0;       // the first step at which a centre of mass drifted more than 1 cm (0: never)
};

struct SimHooks {
    // Makes a VPS object's files from its mesh (haptic-sim: the pipeline, cached). Required when a
    // vps method has "prepare".
    std::function<VpsFiles(const SceneObject&, const PrepareSpec&)> prepare;
    std::filesystem::path cache_dir;  // HACD decompositions, keyed by the mesh's hash and the parameters
    std::function<void(const std::string&)> note;  // progress lines (which run, cache hits)
};

// A VPS object's field and tree made by the pipeline of `spec` on the object's mesh (or spec.mesh),
// as haptic-pipeline PIPELINE MESH -o CACHE/prepared/<pipeline>-<parameters' hash> --resume would:
// made once, found on later runs. Throws hp::Error: bad_input when the pipeline lacks the distance
// or spheretree stage, the batch's code when preparing fails.
VpsFiles prepare_vps_files(const SceneObject& object, const PrepareSpec& spec, const std::filesystem::path& cache,
                           const std::function<void(const std::string&)>& note);
// haptic-sim's hooks: prepare_vps_files into `cache`, once per mesh and pipeline; HACD hulls in
// `cache`; progress lines to `note`.
SimHooks cached_hooks(const std::filesystem::path& cache, std::function<void(const std::string&)> note);
// $XDG_CACHE_HOME/hapticprep, else ~/.cache/hapticprep, else .hapticprep-cache.
std::filesystem::path default_cache_dir();

std::vector<RunResult> run_scene(const Scene& scene, const SimHooks& hooks);

// Runs grouped by (label, rate, restitution, count), over the rotations: the mean of the runs' mean
// narrow-phase time (the paper's average) and the mean of the runs' median step time (robust to a
// step the scheduler interrupts on a busy machine), max and median of the maximum penetration,
// runs that fell through.
struct MethodSummary {
    std::string label, method;
    double rate = 0, restitution = -1;
    int count = 0;
    std::size_t runs = 0, points = 0, parts = 0;
    double mean_collision_us = 0, median_collision_us = 0, mean_contacts = 0, mean_step_contacts = 0;
    double max_penetration = 0, median_max_penetration = 0, max_penetration_window = 0;
    double final_penetration = 0;  // median over the runs
    double max_pile_penetration = 0, final_pile_penetration = 0;  // max; median over the runs
    double drift = 0, max_drift = 0;                                // median; max over the runs
    int drift_step = 0;                                             // median over the runs (0: never)
    int fell_through = 0;
};
std::vector<MethodSummary> summarize(const std::vector<RunResult>& runs);

// The report: {"scene", "summary": [...], "runs": [{... "steps": [...]}]} (steps only with `steps`).
nlohmann::json report_json(const Scene& scene, const std::vector<RunResult>& runs, bool steps);
// One row per step and dynamic object.
std::string report_csv(const std::vector<RunResult>& runs);
// The summary table haptic-sim prints: one line per method summary.
std::string format_text(const Scene& scene, const std::vector<RunResult>& runs);
// Like the paper's Figures 8 and 10, PNG charts into `dir` (made if needed): per rate and
// restitution, the narrow phase's time per step and the first dynamic object's kinetic energy per
// step (log scales), one series per variant (its first rotation); with several counts of copies,
// the median step time against the count. Returns the files written.
std::vector<std::filesystem::path> write_plots(const std::filesystem::path& dir, const Scene& scene,
                                               const std::vector<RunResult>& runs);

}  // namespace hp::bullet
