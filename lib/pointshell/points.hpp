#pragma once
// lib/pointshell/points — the pointshell: points on the surface of the moving object, each with
// its unit inward normal and its source triangle. Written and read by formats/shell.hpp.
#include <cstdint>
#include <vector>

#include "math/vec.hpp"

namespace hp {

struct Pointshell {
    std::vector<Vec3d> points;             // world units (metres)
    std::vector<Vec3d> normals;            // unit, inward
    std::vector<std::uint32_t> triangles;  // source triangle of each point
};

}  // namespace hp
