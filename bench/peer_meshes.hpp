#pragma once
// The triangles of a mesh as the peers take them (header only; bench_peers, bench_scene_peers):
// FCL's BVHModel<OBBRSS>, the vertex and index arrays a Bullet triangle shape points into, a GImpact
// shape over them.
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/math/bv/OBBRSS.h>

#include "mesh/mesh.hpp"

namespace hp::bench {

// A quaternion (w, x, y, z) made unit.
inline std::array<double, 4> unit_quaternion(const std::array<double, 4>& q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    return {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
}

using FclModel = fcl::BVHModel<fcl::OBBRSSd>;

inline std::shared_ptr<FclModel> fcl_model(const TriMesh& m) {
    std::vector<fcl::Vector3d> v;
    std::vector<fcl::Triangle> t;
    for (const auto& p : m.vertices) v.emplace_back(p.x, p.y, p.z);
    for (const auto& f : m.triangles) t.emplace_back(f[0], f[1], f[2]);
    auto model = std::make_shared<FclModel>();
    model->beginModel(int(t.size()), int(v.size()));
    model->addSubModel(v, t);
    model->endModel();
    return model;
}

// Bullet's shapes keep pointers into these arrays: the object must outlive them.
struct BulletTriangles {
    std::vector<btScalar> vertices;
    std::vector<int> indices;
    std::unique_ptr<btTriangleIndexVertexArray> array;

    explicit BulletTriangles(const TriMesh& m) {
        for (const auto& v : m.vertices) vertices.insert(vertices.end(), {btScalar(v.x), btScalar(v.y), btScalar(v.z)});
        for (const auto& t : m.triangles) indices.insert(indices.end(), {int(t[0]), int(t[1]), int(t[2])});
        array = std::make_unique<btTriangleIndexVertexArray>(int(m.triangles.size()), indices.data(), int(3 * sizeof(int)),
                                                             int(m.vertices.size()), vertices.data(),
                                                             int(3 * sizeof(btScalar)));
    }
};

// A GImpact shape over `t` with margin `margin` (world units), its bound updated.
inline std::unique_ptr<btGImpactMeshShape> gimpact_shape(const BulletTriangles& t, double margin) {
    auto shape = std::make_unique<btGImpactMeshShape>(t.array.get());
    shape->setMargin(btScalar(margin));
    shape->updateBound();
    return shape;
}

}  // namespace hp::bench
