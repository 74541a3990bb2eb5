#pragma once
// Helpers shared by the bench executables (header only: bench/*.cpp each become one executable).
#include <algorithm>
#include <chrono>
#include <vector>

#include <openvdb/openvdb.h>
#include <openvdb/tools/MeshToVolume.h>

#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"

namespace hp::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A mesh as OpenVDB's mesh-to-volume tools take it, on our grid (same transform: index (0,0,0)
// at the centre of voxel (0,0,0)), points in world space.
struct OpenVdbInput {
    openvdb::math::Transform::Ptr xform;
    std::vector<openvdb::Vec3s> points;
    std::vector<openvdb::Vec3I> tris;
};

inline OpenVdbInput openvdb_input(const TriMesh& mesh, const GridSpec& g) {
    openvdb::initialize();
    const double s = g.voxel_size;
    OpenVdbInput in;
    in.xform = openvdb::math::Transform::createLinearTransform(s);
    in.xform->postTranslate(openvdb::Vec3d(g.origin.x + s / 2, g.origin.y + s / 2, g.origin.z + s / 2));
    in.points.reserve(mesh.vertices.size());
    in.tris.reserve(mesh.triangles.size());
    for (const auto& v : mesh.vertices) in.points.emplace_back(float(v.x), float(v.y), float(v.z));
    for (const auto& t : mesh.triangles) in.tris.emplace_back(t[0], t[1], t[2]);
    return in;
}

// Median time of OpenVDB's meshToSignedDistanceField on our grid.
inline double openvdb_sdf_seconds(const TriMesh& mesh, const GridSpec& g, float ex_band, float in_band, int runs) {
    const auto [xform, points, tris] = openvdb_input(mesh, g);
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        auto grid = openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*xform, points, tris, {}, ex_band, in_band);
        times.push_back(seconds_since(t0));
    }
    return median(times);
}

}  // namespace hp::bench
