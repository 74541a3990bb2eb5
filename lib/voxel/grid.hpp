#pragma once
// GridSpec — the regular voxel grid every field of hapticprep lives on.
//
// Voxel (i, j, k), 0 <= i < dims[0] etc., is the cube [origin + (i,j,k)*s, origin + (i+1,j+1,k+1)*s]
// with centre origin + (i+0.5, j+0.5, k+0.5)*s, world units. Dense arrays over a grid are laid
// out x fastest: index = (k * dims[1] + j) * dims[0] + i. In an OpenVDB file the voxel (i, j, k)
// has index coordinate (i, j, k) and the transform maps it to its centre (see formats/vdb.md).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "math/vec.hpp"

namespace hp {

struct GridSpec {
    Vec3d origin;                     // world position of the min corner of voxel (0,0,0)
    double voxel_size = 0;            // edge length s of a voxel, world units
    std::array<int, 3> dims{0, 0, 0}; // voxels along x, y, z

    std::size_t count() const {
        return static_cast<std::size_t>(dims[0]) * static_cast<std::size_t>(dims[1]) *
               static_cast<std::size_t>(dims[2]);
    }
    std::size_t index(int i, int j, int k) const {
        return (static_cast<std::size_t>(k) * static_cast<std::size_t>(dims[1]) +
                static_cast<std::size_t>(j)) * static_cast<std::size_t>(dims[0]) +
               static_cast<std::size_t>(i);
    }
    Vec3d center(int i, int j, int k) const {
        return origin + Vec3d{(i + 0.5) * voxel_size, (j + 0.5) * voxel_size, (k + 0.5) * voxel_size};
    }
    Vec3d corner(int i, int j, int k) const {
        return origin + Vec3d{i * voxel_size, j * voxel_size, k * voxel_size};
    }
    bool contains(int i, int j, int k) const {
        return i >= 0 && j >= 0 && k >= 0 && i < dims[0] && j < dims[1] && k < dims[2];
    }
    Aabb bounds() const { return {corner(0, 0, 0), corner(dims[0], dims[1], dims[2])}; }
};

// The grid over `box` plus `pad` voxels on every side, centred on the box:
// dims[a] = max(1, ceil(size[a] / s)) + 2 * pad. Precondition: s > 0, pad >= 0, box not empty.
// Callers check the size first (voxel_count_for) to turn absurd grids into a usage error.
inline GridSpec grid_around(const Aabb& box, double s, int pad) {
    GridSpec g;
    g.voxel_size = s;
    Vec3d size = box.size();
    for (int a = 0; a < 3; ++a) {
        g.dims[a] = static_cast<int>(std::max(1.0, std::ceil(size[a] / s - 1e-9))) + 2 * pad;
    }
    Vec3d extent{g.dims[0] * s, g.dims[1] * s, g.dims[2] * s};
    g.origin = box.center() - extent * 0.5;
    return g;
}

// Voxels of grid_around(box, s, pad) as a double (no overflow), for size checks before allocating.
inline double voxel_count_for(const Aabb& box, double s, int pad) {
    Vec3d size = box.size();
    double n = 1;
    for (int a = 0; a < 3; ++a) n *= std::max(1.0, std::ceil(size[a] / s - 1e-9)) + 2.0 * pad;
    return n;
}

}  // namespace hp
