// haptic-sim's preparing and caching: a VPS object's files made by its pipeline (haptic-pipeline's
// batch run with --resume, keyed by the pipeline's parameters), once per mesh and pipeline in a run;
// the cache folder's default (docs/sim.md, "--cache").
#include <cstdlib>
#include <sstream>

#include "bullet/sim.hpp"
#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/pipeline.hpp"

namespace hp::bullet {

namespace pl = hp::pipeline;

std::filesystem::path default_cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "hapticprep";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "hapticprep";
    return ".hapticprep-cache";
}

// A VPS object's field and tree, made by the pipeline into CACHE/prepared/<pipeline>-<hash>/ and
// reused while the mesh and the parameters stay the same (the pipeline's --resume).
VpsFiles prepare_vps_files(const SceneObject& object, const PrepareSpec& spec, const std::filesystem::path& cache,
                           const std::function<void(const std::string&)>& note) {
    std::vector<pl::Override> overrides;
    for (const std::string& s : spec.set) overrides.push_back(pl::parse_override(s));
    const std::filesystem::path mesh = spec.mesh.empty() ? object.mesh : spec.mesh;
    if (object.scale != 1 && spec.mesh.empty()) {
        std::ostringstream scale;
        scale.precision(17);
        scale << "voxelize.scale=" << object.scale;
        overrides.push_back(pl::parse_override(scale.str()));
    }
    const pl::Pipeline pipeline = pl::load_pipeline(spec.pipeline, overrides);
    for (const char* stage : {"distance", "spheretree"}) {
        bool found = false;
        for (const pl::StageConfig& c : pipeline.stages) found = found || c.spec->name == stage;
        if (!found)
            fail_input(spec.pipeline.string(), std::string("the pipeline has no '") + stage +
                                                       "' stage: a VPS object needs its distance field and tree");
    }
    const std::filesystem::path outdir = cache / "prepared" / (pipeline.name + "-" + pipeline.params_hash());
    const auto jobs = pl::plan_meshes({mesh});
    pl::BatchOptions options;
    options.outdir = outdir;
    options.resume = true;
    options.batch_meshes = jobs.size();
    if (note) note("preparing " + mesh.string() + " with " + spec.pipeline.string() + " in " + outdir.string());
    const pl::Manifest manifest = pl::run_batch(pipeline, jobs, options);
    const pl::MeshEntry& entry = manifest.meshes.at(0);
    if (entry.status != pl::MeshStatus::ok)
        throw Error(static_cast<ExitCode>(entry.exit_code.value_or(3)),
                        mesh.string() + ": preparing it failed: " + entry.error.value_or("unknown error"));
    return {outdir / jobs[0].name / "distance.vdb", outdir / jobs[0].name / "spheretree.hps", {}};
}

SimHooks cached_hooks(const std::filesystem::path& cache, std::function<void(const std::string&)> note) {
    SimHooks hooks;
    hooks.cache_dir = cache;
    hooks.note = note;
    // Each mesh and pipeline is prepared (or found prepared) once per run of the scene, whatever the
    // objects (copies, instances) that use it.
    auto prepared = std::make_shared<std::vector<std::pair<std::string, VpsFiles>>>();
    hooks.prepare = [prepared, cache, note](const SceneObject& o, const PrepareSpec& p) {
        std::ostringstream key;
        key.precision(17);
        if (p.mesh.empty()) key << o.mesh.string() << '\n' << o.scale;
        else key << p.mesh.string();
        key << '\n' << p.pipeline.string();
        for (const std::string& s : p.set) key << '\n' << s;
        for (const auto& [k, files] : *prepared)
            if (k == key.str()) return files;
        prepared->emplace_back(key.str(), prepare_vps_files(o, p, cache, note));
        return prepared->back().second;
    };
    return hooks;
}

}  // namespace hp::bullet
