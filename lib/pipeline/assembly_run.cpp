#include "pipeline/assembly_run.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "formats/sampler.hpp"
#include "query/static_field.hpp"

namespace hp::pipeline {

namespace {

StageConfig* find_config(Pipeline& p, const std::string& stage) {
    for (StageConfig& s : p.stages)
        if (s.spec->name == stage) return &s;
    return nullptr;
}

// The bounds of the vertices that triangles use, times `factor`: the geometry's mesh bounds in
// output units (welding moves no vertex; a dropped degenerate triangle can only shrink them).
Aabb soup_bounds(const TriMesh& soup, double factor) {
    Aabb b;
    for (const auto& t : soup.triangles)
        for (std::uint32_t v : t) b.extend(soup.vertices[v] * factor);
    return b;
}

}  // namespace

AssemblyPlan plan_assembly(Pipeline& pipeline, const std::filesystem::path& file) {
    StageConfig* vox = find_config(pipeline, "voxelize");
    if (!vox)
        fail_usage(pipeline.source + ": --assembly prepares the parts with the pipeline's stages, and they need a voxelize "
                                     "stage (one voxel size for the whole assembly)");
    MeshLoadOptions mopt;
    if (vox->params.contains("scale") && vox->params["scale"].is_number()) mopt.scale = vox->params["scale"].get<double>();
    if (vox->params.contains("units") && vox->params["units"].is_string()) mopt.units = vox->params["units"].get<std::string>();
    for (const char* key : {"linear_deflection", "angular_deflection"})
        if (vox->params.contains(key) && vox->params[key].is_number())
            (key[0] == 'l' ? mopt.linear_deflection : mopt.angular_deflection) = vox->params[key].get<double>();
    if (vox->params.contains("voxel_size") && vox->params["voxel_size"].is_number()) mopt.voxel_size = vox->params["voxel_size"].get<double>();
    mopt.resolution = vox->params.value("resolution", 128);

    AssemblyPlan plan;
    plan.file = file;
    plan.assembly = std::make_shared<const Assembly>(read_assembly(file, mopt));
    Aabb world;
    for (const AssemblyGeometry& g : plan.assembly->geometries) plan.local_bounds.push_back(soup_bounds(g.soup, plan.assembly->factor));
    for (const AssemblyPart& p : plan.assembly->parts) world.extend(hp::world_bounds(plan.local_bounds[p.geometry], p.placement));

    if (vox->params.contains("voxel_size") && vox->params["voxel_size"].is_number()) {
        plan.voxel_size = vox->params["voxel_size"].get<double>();
    } else {
        const int resolution = vox->params.value("resolution", 128);
        const Vec3d size = world.size();
        plan.voxel_size = std::max({size.x, size.y, size.z}) / resolution;
        if (!(plan.voxel_size > 0) || !std::isfinite(plan.voxel_size))
            fail_input(file.string(), "the assembly has no extent (every part is flat or a point); give voxelize.voxel_size");
        vox->params["voxel_size"] = plan.voxel_size;
        vox->given["voxel_size"] = plan.voxel_size;
        vox->given.erase("resolution");
        if (plan.assembly->tessellation.linear_deflection > 0 && mopt.linear_deflection <= 0) {
            // STEP/IGES: tessellated again at the voxel size its parts' stages will use.
            mopt.voxel_size = plan.voxel_size;
            plan.assembly = std::make_shared<const Assembly>(read_assembly(file, mopt));
            plan.local_bounds.clear();
            for (const AssemblyGeometry& g : plan.assembly->geometries)
                plan.local_bounds.push_back(soup_bounds(g.soup, plan.assembly->factor));
        }
    }
    // Meshes are shared with the stages; a CAD file is tessellated by each stage as its options say.
    const bool share = plan.assembly->tessellation.linear_deflection <= 0;
    for (std::size_t g = 0; g < plan.assembly->geometries.size(); ++g)
        plan.jobs.push_back({plan.assembly->geometries[g].id, file, "@" + std::to_string(g),
                             share ? plan.assembly : std::shared_ptr<const Assembly>()});
    return plan;
}

scene::Scene scene_of(const AssemblyPlan& plan, const Pipeline& pipeline, const Manifest& manifest) {
    const Assembly& a = *plan.assembly;
    scene::Scene s;
    s.source_file = plan.file.string();
    s.source_name = a.source_name;
    s.source_hash = a.source_hash;
    s.units = a.units.empty() ? "file units" : a.units;
    s.voxel_size = plan.voxel_size;
    s.pipeline_name = pipeline.name;
    s.params_hash = pipeline.params_hash();
    s.notes = a.notes;
    std::map<std::string, const MeshEntry*> entries;
    for (const MeshEntry& e : manifest.meshes) entries[e.name] = &e;
    std::map<std::string, std::string> kind_of;  // stage -> the kind of file it makes
    for (const StageConfig& c : pipeline.stages) kind_of[c.spec->name] = c.spec->produces;

    for (std::size_t g = 0; g < a.geometries.size(); ++g) {
        const AssemblyGeometry& ag = a.geometries[g];
        scene::SceneGeometry out;
        out.id = ag.id;
        out.part = "@" + std::to_string(g);
        out.first_part = a.parts[ag.first_part].name;
        out.instances = ag.instances;
        out.baked = ag.baked;
        out.local_bounds = plan.local_bounds[g];
        const auto it = entries.find(ag.id);
        if (it == entries.end() || it->second->status == MeshStatus::planned) {
            out.ok = false;
            out.error = "not prepared in this run (another shard; merge the shards' manifests)";
        } else if (it->second->status == MeshStatus::failed) {
            out.ok = false;
            out.error = it->second->error.value_or("failed");
        } else {
            const MeshEntry& e = *it->second;
            if (e.diagnostics.is_object()) out.triangles = e.diagnostics.value("triangles", std::size_t{0});
            for (const OutputRecord& o : e.outputs)
                if (o.deterministic && kind_of.count(o.stage) && kind_of[o.stage] != "report")
                    out.files[kind_of[o.stage]] = {o.file, o.bytes.value_or(0), o.hash.value_or("")};
        }
        s.geometries.push_back(std::move(out));
    }
    for (const AssemblyPart& p : a.parts) s.parts.push_back(scene::make_scene_part(p, plan.local_bounds[p.geometry]));
    return s;
}

void write_samplers(const std::filesystem::path& scene_path, scene::Scene& scene) {
    namespace fs = std::filesystem;
    for (scene::SceneGeometry& g : scene.geometries) {
        if (!g.ok) continue;
        const auto field = g.files.count("distance") ? g.files.find("distance") : g.files.find("voxelmap");
        if (field == g.files.end()) continue;
        const scene::FileRef ref = field->second;
        const fs::path field_path = scene_path.parent_path() / ref.file;
        const std::string file = fs::path(ref.file).replace_extension(kSamplerExtension).generic_string();
        const fs::path path = scene_path.parent_path() / file;
        bool current = false;
        std::error_code ec;
        if (fs::is_regular_file(path, ec)) {
            try {
                const nlohmann::json made = map_sampler_file(path).metadata.value("field", nlohmann::json::object());
                current = made.value("hash", "") == ref.hash && made.value("bytes", std::uint64_t{0}) == ref.bytes;
            } catch (const Error&) {
                current = false;  // damaged or of another kind: made again
            }
        }
        if (!current) {
            write_static_sampler(path, field_path.filename().string(), ref.bytes, ref.hash, load_static_field(field_path));
        }
        g.files["sampler"] = {file, fs::file_size(path, ec), content_hash(path)};
    }
}

}  // namespace hp::pipeline
