#pragma once
// haptic-pipeline --assembly: a multi-part file prepared once per distinct geometry (docs/scene.md).
//
// plan_assembly reads the file's parts (mesh/assembly.hpp) and makes one batch job per geometry:
// folder OUTDIR/<geometry id>/, the stages reading the geometry in its own frame ("@G"), so that
// its files are byte-identical to the executables run with --part on its first instance. The
// whole assembly gets one voxel size: the pipeline's voxelize.voxel_size when given, else the
// assembly's longest world extent / voxelize.resolution (a pin and its housing must not get
// different voxel sizes because one is smaller); it is written into the pipeline's voxelize
// stage. Batches, --resume, --shard and the manifest then work per geometry as for meshes.
// scene_of turns the batch's manifest into scene.json (scene/scene_file.hpp): parts, placements,
// bounds, and per geometry its files with size and hash, or its error.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "mesh/assembly.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/pipeline.hpp"
#include "scene/scene_file.hpp"

namespace hp::pipeline {

struct AssemblyPlan {
    std::filesystem::path file;
    std::shared_ptr<const Assembly> assembly;
    std::vector<Aabb> local_bounds;  // per geometry, in output units
    double voxel_size = 0;
    std::vector<MeshJob> jobs;       // one per geometry, in geometry order
};

// Reads the assembly with the pipeline's units and scale (voxelize.units, voxelize.scale) and
// sets the voxel size in `pipeline` (see above). Throws what read_assembly throws, and
// hp::Error(usage) when the pipeline has no voxelize stage.
AssemblyPlan plan_assembly(Pipeline& pipeline, const std::filesystem::path& file);

// scene.json from the plan and the batch's manifest (entries by job name; a geometry with no
// entry, in another shard, is recorded as not prepared).
scene::Scene scene_of(const AssemblyPlan& plan, const Pipeline& pipeline, const Manifest& manifest);

// Beside each prepared geometry's distance field (or voxelmap, without one) its prepared sampler
// (formats/sampler.md: the field's sampler as the query reads it, mapped at load without
// decoding), recorded in its files as kind "sampler". Call after hash_scene_files: the sampler
// records the field's size and hash as scene.json does. A sampler already there that records
// the same field is kept (--resume); any other is made again. Throws what the field's reader
// throws, and hp::Error(cannot_write).
void write_samplers(const std::filesystem::path& scene_path, scene::Scene& scene);

}  // namespace hp::pipeline
