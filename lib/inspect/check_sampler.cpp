// haptic-dump --check of prepared sampler files (.hsmp; lib/inspect/check.hpp, formats/sampler.md).
#include <cstdio>
#include <string>

#include "formats/sampler.hpp"
#include "inspect/check.hpp"

namespace hp::inspect {

void check_sampler(const std::filesystem::path& path, CheckReport& r) {
    // The reader validates the layout (scalars, every array's offset and size against the grid, a
    // band's tables) and throws for a file that breaks it: the sampler cannot read such a file at
    // all (exit 3).
    const SamplerFile f = map_sampler_file(path);
    const DistanceSampler& s = f.sampler;
    const GridSpec& g = s.grid();
    char voxel[32];
    std::snprintf(voxel, sizeof voxel, "%.9g", g.voxel_size);
    r.pass("layout: a " + std::to_string(g.dims[0]) + " x " + std::to_string(g.dims[1]) + " x " + std::to_string(g.dims[2]) +
           " grid of voxel size " + voxel + ", " + (s.sparse() ? "narrow band" : "dense") + ", " +
           (s.float_samples() ? "float32" : "float64") + " samples; every array at a 64-byte boundary with the size its grid gives");
    if (!f.metadata.contains("field") || !f.metadata["field"].is_object())
        r.problem("metadata has no 'field' record (the field file the sampler was made from)");
    else
        r.pass("metadata names the field it was made from");
}

}  // namespace hp::inspect
