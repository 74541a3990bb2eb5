// The mesh options of haptic-dump: the stages' declaration of them (declare_mesh_options), on a
// struct of their own.
#include "pipeline/stage_common.hpp"

namespace hp::pipeline {

const std::vector<ParamSpec>& mesh_params() {
    static const std::vector<ParamSpec> params = [] {
        std::vector<ParamSpec> list;
        Declare<MeshParams> d(list);
        // No voxel size here: the chord tolerance follows the file's size (MeshLoadOptions::resolution).
        declare_mesh_options(d, "", "0.25 x the file's longest side / " + std::to_string(MeshLoadOptions{}.resolution));
        return list;
    }();
    return params;
}

void apply(const MeshParams& p, MeshLoadOptions& options) {
    if (p.scale) options.scale = *p.scale;
    if (p.units) options.units = *p.units;
    if (p.part) options.part = *p.part;
    if (p.linear_deflection) options.linear_deflection = *p.linear_deflection;
    if (p.angular_deflection) options.angular_deflection = *p.angular_deflection;
}

}  // namespace hp::pipeline
