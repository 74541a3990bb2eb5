#pragma once
// lib/query/ist_check — haptic-query's modes ist and ist-brute: the moving object's octree
// against the static object's (implicit sphere trees, octree/ist.hpp; docs/octree.md) on the same
// poses, scenarios, report, budget and exit codes as the VPS modes.
//
// The static field (--static) and the moving pointshell tree (--moving) are read as for the other
// modes: they give the poses (scenarios place the moving tree, so ist and VPS run on identical
// poses) and the contacts' normals: -grad V at the moving voxel's centre (the distance field's
// gradient, or the layers' when --static is a voxelmap), the direction between the two voxel
// centres where the gradient vanishes. A contact is a voxel pair (node pair when the descent stops
// early) with both centres, the normal and the penetration depth rA + rB - |cA - cB| (paper
// 3.3.1); force = sum depth n, torque about the moving origin. Each query is timed with its
// normals and force.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/progress.hpp"
#include "field/field.hpp"
#include "math/vec.hpp"
#include "octree/ist.hpp"
#include "query/check_run.hpp"

namespace hp {

// What mode ist makes of a query's contacts (part of the timed query): each contact's normal
// -grad V / |grad V| at the moving centre (the direction between the centres where the gradient
// vanishes), force = sum depth n, torque about `origin`. A moving voxel in contact with several
// static voxels has its gradient read usually once per query (a 512-slot direct-mapped cache by
// voxel ordinal; two voxels sharing a slot are read again): the same values, fewer reads.
struct IstForce {
    std::size_t contacts = 0;
    double max_depth = 0;
    Vec3d force, torque;
};
class IstResponse {
public:
    explicit IstResponse(const DistanceSampler& field) : field_(field) {}
    IstForce operator()(const std::vector<octree::IstContact>& contacts, const Vec3d& origin);

private:
    struct Slot {
        std::uint32_t voxel = 0, stamp = 0;
        Vec3d direction;  // normalized(-grad V) at the voxel's centre (zero where grad V vanishes)
    };
    const DistanceSampler& field_;
    std::array<Slot, 512> cache_{};
    std::uint32_t stamp_ = 0;
};

// The octree modes of haptic-query --mode, after the VPS modes (kQueryModeNames).
inline constexpr std::array<std::string_view, 2> kIstModeNames{"ist", "ist-brute"};
bool is_ist_mode(const std::string& mode);  // one of kIstModeNames
// Every mode's name, VPS then octree, as a usage message lists them: "full, brute, ... or ist-brute".
std::string query_mode_list();

// Throws hp::Error: usage for missing octrees or options of other modes; bad_input for files
// that fail their readers.
QueryCheck run_ist_check(const QueryCheckSpec& spec, const Progress& progress = {});

}  // namespace hp
