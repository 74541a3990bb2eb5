// lib/bullet against closed forms: mass properties from meshes and voxels, and the dispatcher's
// choice of algorithm for each pair of shapes.
#include "vps_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <gtest/gtest.h>

#include "bullet/data.hpp"

using namespace hp_bullet_test;

TEST(BulletMass, BoxMeshMatchesClosedForm) {
    // A 2 x 3 x 4 box with its min corner at (1, 2, 3), wound outward; and the same wound inward.
    const double a = 2, b = 3, c = 4;
    std::vector<hp::Vec3d> v;
    for (int i = 0; i < 8; ++i) v.push_back({1 + a * (i & 1), 2 + b * ((i >> 1) & 1), 3 + c * ((i >> 2) & 1)});
    std::vector<std::array<std::uint32_t, 3>> t = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                                   {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (int pass = 0; pass < 2; ++pass) {
        const hb::MassProperties m = hb::mass_properties_of_mesh(v, t);
        const double vol = a * b * c;
        EXPECT_NEAR(m.volume, vol, 1e-12);
        EXPECT_NEAR(m.center_of_mass.x, 2, 1e-12);
        EXPECT_NEAR(m.center_of_mass.y, 3.5, 1e-12);
        EXPECT_NEAR(m.center_of_mass.z, 5, 1e-12);
        // I = m/12 (b^2 + c^2, a^2 + c^2, a^2 + b^2), no products of inertia.
        const double want[3] = {vol / 12 * (b * b + c * c), vol / 12 * (a * a + c * c), vol / 12 * (a * a + b * b)};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) EXPECT_NEAR(m.inertia[i][j], i == j ? want[i] : 0, 1e-9) << i << j;
        std::vector<double> moments{m.principal_moments.x, m.principal_moments.y, m.principal_moments.z};
        std::sort(moments.begin(), moments.end());
        std::vector<double> sorted(want, want + 3);
        std::sort(sorted.begin(), sorted.end());
        for (int i = 0; i < 3; ++i) EXPECT_NEAR(moments[i], sorted[i], 1e-9);
        for (auto& tri : t) std::swap(tri[1], tri[2]);  // inward for the second pass
    }
}

TEST(BulletMass, RotatedBoxHasItsAxesAsPrincipalAxes) {
    // A 1 x 2 x 4 box rotated 30 degrees about z: principal axes are the rotated box axes.
    const double ang = std::numbers::pi / 6, cs = std::cos(ang), sn = std::sin(ang);
    std::vector<hp::Vec3d> v;
    for (int i = 0; i < 8; ++i) {
        const hp::Vec3d p{1.0 * (i & 1), 2.0 * ((i >> 1) & 1), 4.0 * ((i >> 2) & 1)};
        v.push_back({cs * p.x - sn * p.y, sn * p.x + cs * p.y, p.z});
    }
    const std::vector<std::array<std::uint32_t, 3>> t = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                                         {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                                         {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    const hb::MassProperties m = hb::mass_properties_of_mesh(v, t);
    const double vol = 8;
    const hp::Vec3d box_x{cs, sn, 0};
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(hp::length(m.principal_axes[i]), 1, 1e-9);
        // The axis with moment m/12 (2^2 + 4^2) is the box's x axis.
        if (std::abs(m.principal_moments[i] - vol / 12 * 20) < 1e-9) {
            EXPECT_NEAR(std::abs(hp::dot(m.principal_axes[i], box_x)), 1, 1e-9);
        }
    }
    EXPECT_NEAR(hp::dot(hp::cross(m.principal_axes[0], m.principal_axes[1]), m.principal_axes[2]), 1, 1e-9);
}

TEST(BulletMass, SphereFromItsMeshAndOpenBoxFromVoxels) {
    // The icosphere (radius 1, 1,280 triangles) is within 2% of the ball's volume and moments.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const hb::MassProperties& s = hb::mass_properties(*sphere);
    EXPECT_EQ(s.source, "mesh");
    const double ball = 4.0 / 3 * std::numbers::pi;
    EXPECT_NEAR(s.volume / ball, 1, 0.02);
    EXPECT_NEAR(hp::length(s.center_of_mass), 0, 1e-9);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(s.principal_moments[i] / (0.4 * ball), 1, 0.04);

    // The box without its top face is not watertight: its mass properties come from the field.
    const auto open = hb::load_vps_data(files("openbox", "open-box.obj"));
    const hb::MassProperties& o = hb::mass_properties(*open);
    EXPECT_EQ(o.source, "voxels");
    EXPECT_NEAR(o.volume, 1, 0.06);  // the surface (area 6) times a voxel's fifth
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(o.center_of_mass[i], 0.5, kVoxel);
        EXPECT_NEAR(o.principal_moments[i], 1.0 / 6, 0.03);
    }
}

TEST(BulletMass, MissingFileNamesIt) {
    try {
        hb::load_vps_data({data_dir() / "nothing.dist.vdb", data_dir() / "sphere.hps", {}});
        FAIL() << "no error";
    } catch (const hp::Error& e) {
        EXPECT_NE(std::string(e.what()).find("nothing.dist.vdb"), std::string::npos) << e.what();
    }
}

TEST(BulletDispatch, VpsAlgorithmForVpsPairsBulletsOwnForOthers) {
    const auto data = hb::load_vps_data(files("sphere", "sphere.obj"));
    auto vps = hb::make_vps_shape(data);
    btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
    btBoxShape box(btVector3(1, 1, 1));
    btSphereShape ball(1);
    EXPECT_STREQ(vps->getName(), "VPS");
    EXPECT_EQ(hb::vps_data(*vps), data.get());
    EXPECT_EQ(hb::vps_data(box), nullptr);

    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    auto pick = [&](btCollisionShape* a, btCollisionShape* b) {
        btCollisionObject oa, ob;
        oa.setCollisionShape(a);
        ob.setCollisionShape(b);
        const btTransform id = btTransform::getIdentity();
        btCollisionObjectWrapper wa(nullptr, a, &oa, id, -1, -1), wb(nullptr, b, &ob, id, -1, -1);
        btCollisionAlgorithm* alg = dispatcher.findAlgorithm(&wa, &wb, nullptr, BT_CONTACT_POINT_ALGORITHMS);
        const int kind = alg == nullptr ? 0 : (hb::is_vps_algorithm(alg) ? 2 : 1);
        if (alg) {
            alg->~btCollisionAlgorithm();
            dispatcher.freeCollisionAlgorithm(alg);
        }
        return kind;  // 0 none, 1 Bullet's, 2 VPS
    };
    // Before registration Bullet has nothing of ours.
    EXPECT_NE(pick(vps.get(), &plane), 2);
    hb::register_vps_algorithms(dispatcher);
    auto vps2 = hb::make_vps_shape(data);
    EXPECT_EQ(pick(vps.get(), vps2.get()), 2);
    EXPECT_EQ(pick(vps.get(), &plane), 2);
    EXPECT_EQ(pick(&plane, vps.get()), 2);
    EXPECT_EQ(pick(vps.get(), &box), 2);
    EXPECT_EQ(pick(&box, vps.get()), 2);
    EXPECT_EQ(pick(&ball, &plane), 1);
    EXPECT_EQ(pick(&ball, &box), 1);
    EXPECT_EQ(pick(&box, &box), 1);
}
