// STEP and IGES files (mesh/cad.hpp, docs/cad.md), written here with OpenCASCADE itself and read
// back through load_mesh and read_assembly. Oracles: closed forms of the solids' volumes and areas
// (the tessellation within |dV| <= A d of the exact volume, A the exact area, d the chord
// tolerance), the placements the test wrote, the units the files declare, and the same box written
// as an OBJ. The executables are run for what only they show: exit codes and identical bytes for
// any --threads.
#include <cmath>
#include <numbers>

#include "cad_test_files.hpp"
#include "core/error.hpp"
#include "mesh/assembly.hpp"
#include "mesh/cad.hpp"
#include "voxel/grid.hpp"
#include "voxel/voxelize.hpp"

using std::numbers::pi;

using namespace cad_test;

namespace {

// A closed, outward mesh whose volume is within A d of the exact one.
void expect_within_bound(const hp::LoadedMesh& m, double exact_volume, double exact_area) {
    const double d = m.tessellation.linear_deflection;
    ASSERT_GT(d, 0);
    EXPECT_EQ(m.diagnostics.boundary_edges, 0u);
    EXPECT_EQ(m.diagnostics.nonmanifold_edges, 0u);
    EXPECT_EQ(m.diagnostics.inconsistent_edges, 0u);
    EXPECT_TRUE(m.diagnostics.watertight);
    EXPECT_LE(std::abs(m.diagnostics.signed_volume - exact_volume), exact_area * d)
        << "volume " << m.diagnostics.signed_volume << ", exact " << exact_volume << ", d " << d;
}

}  // namespace

TEST(Cad, DetectsStepAndIgesByContent) {
    EXPECT_EQ(hp::cad_kind("ISO-10303-21;\nHEADER;"), "step");
    EXPECT_EQ(hp::cad_kind("  \nISO-10303-21;"), "step");
    EXPECT_EQ(hp::cad_kind(std::string(72, ' ') + "S      1\n"), "iges");
    EXPECT_EQ(hp::cad_kind("solid cube\n"), "");
    // A STEP file named .stl is read as STEP.
    const fs::path box = write_step(BRepPrimAPI_MakeBox(1, 2, 3).Shape(), "box-as.stl");
    EXPECT_EQ(hp::load_mesh(box).tessellation.format, "step");
}

TEST(Cad, StepBoxInMillimetresIsReadInMetres) {
    const fs::path file = write_step(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "box-mm.step");
    const hp::LoadedMesh m = hp::load_mesh(file);
    EXPECT_EQ(m.units, "m");
    EXPECT_EQ(m.tessellation.file_unit, "mm");
    const hp::Vec3d size = m.diagnostics.bbox.size();
    EXPECT_NEAR(size.x, 0.01, 1e-12);
    EXPECT_NEAR(size.y, 0.02, 1e-12);
    EXPECT_NEAR(size.z, 0.03, 1e-12);
    EXPECT_EQ(m.diagnostics.triangles, 12u);
    expect_within_bound(m, 6e-6, 2.2e-3);
    EXPECT_NEAR(m.diagnostics.signed_volume, 6e-6, 1e-15);
}

TEST(Cad, InchFileAndUnitsOverride) {
    const fs::path file = write_step(BRepPrimAPI_MakeBox(25.4, 25.4, 50.8).Shape(), "box-in.step", "INCH", 25.4);
    const hp::LoadedMesh m = hp::load_mesh(file);
    EXPECT_EQ(m.tessellation.file_unit, "in");
    EXPECT_NEAR(m.diagnostics.bbox.size().z, 0.0508, 1e-12);
    EXPECT_TRUE(m.notes.empty());
    // --units mm reads the file's numbers (1 x 1 x 2) as millimetres, and says so.
    hp::MeshLoadOptions mm;
    mm.units = "mm";
    const hp::LoadedMesh o = hp::load_mesh(file, mm);
    EXPECT_NEAR(o.diagnostics.bbox.size().z, 0.002, 1e-12);
    ASSERT_EQ(o.notes.size(), 1u);
    EXPECT_NE(o.notes[0].find("overrides the file's unit (in)"), std::string::npos) << o.notes[0];
}

TEST(Cad, CylinderAndSphereVolumesWithinTheDeflectionBound) {
    const double r = 5, h = 10;  // mm
    const fs::path cyl = write_step(BRepPrimAPI_MakeCylinder(r, h).Shape(), "cylinder.step");
    const double rm = r / 1000, hm = h / 1000;
    const double cyl_area = 2 * pi * rm * rm + 2 * pi * rm * hm, cyl_volume = pi * rm * rm * hm;
    hp::MeshLoadOptions fine;
    fine.linear_deflection = 0.00002;  // m
    const hp::LoadedMesh m = hp::load_mesh(cyl, fine);
    expect_within_bound(m, cyl_volume, cyl_area);
    EXPECT_NEAR(m.tessellation.linear_deflection, 0.00002, 1e-18);
    const fs::path sphere = write_step(BRepPrimAPI_MakeSphere(r).Shape(), "sphere.step");
    const hp::LoadedMesh s = hp::load_mesh(sphere, fine);
    const double sphere_volume = 4.0 / 3 * pi * rm * rm * rm, sphere_area = 4 * pi * rm * rm;
    expect_within_bound(s, sphere_volume, sphere_area);
    // The bound is tight enough to fail for a coarser mesh: the sphere meshed at 4 d loses more
    // than A d (measured: 0.47 A d at d, 1.85 A d at 4 d).
    hp::MeshLoadOptions coarse = fine;
    coarse.linear_deflection = 4 * fine.linear_deflection;
    const hp::LoadedMesh c = hp::load_mesh(sphere, coarse);
    EXPECT_TRUE(c.diagnostics.watertight);
    EXPECT_GT(std::abs(c.diagnostics.signed_volume - sphere_volume), sphere_area * fine.linear_deflection);
    // The default chord tolerance: 0.25 x the longest side / 128, and 0.25 x a given voxel size.
    EXPECT_NEAR(hp::load_mesh(sphere).tessellation.linear_deflection, 0.25 * 2 * rm / 128, 1e-6 * rm);
    hp::MeshLoadOptions voxel;
    voxel.voxel_size = 0.0004;
    EXPECT_NEAR(hp::load_mesh(sphere, voxel).tessellation.linear_deflection, 0.0001, 1e-15);
}

TEST(Cad, HollowSolidKeepsItsVoidInward) {
    const fs::path file = write_step(hollow_solid(), "hollow.step");
    hp::MeshLoadOptions fine;
    fine.linear_deflection = 0.00002;
    const hp::LoadedMesh m = hp::load_mesh(file, fine);
    const double a = 0.02, r = 0.005;
    expect_within_bound(m, a * a * a - 4.0 / 3 * pi * r * r * r, 6 * a * a + 4 * pi * r * r);
    EXPECT_EQ(m.diagnostics.components, 2u);
    const hp::Assembly parts = hp::read_assembly(file, fine);
    ASSERT_EQ(parts.geometries.size(), 1u);
    EXPECT_NEAR(parts.geometries[0].exact_volume, a * a * a - 4.0 / 3 * pi * r * r * r, 1e-12);
}

TEST(Cad, BoxWithAThroughHoleIsOneClosedSolidOfGenusOne) {
    const double a = 20, r = 4, h = 6;  // mm
    const fs::path file = write_step(plate_with_hole(a, r, h), "plate-with-hole.step");
    hp::MeshLoadOptions fine;
    fine.linear_deflection = 0.00001;
    const hp::LoadedMesh m = hp::load_mesh(file, fine);
    const double am = a / 1000, rm = r / 1000, hm = h / 1000;
    const double volume = (am * am - pi * rm * rm) * hm;
    const double area = 2 * (am * am - pi * rm * rm) + 4 * am * hm + 2 * pi * rm * hm;
    expect_within_bound(m, volume, area);
    EXPECT_EQ(m.diagnostics.components, 1u);
    // Euler: V - E + F = 2 - 2g with E = 3F/2 on a closed mesh; the hole makes genus 1.
    const auto v = static_cast<long>(m.mesh.vertices.size()), f = static_cast<long>(m.mesh.triangles.size());
    EXPECT_EQ(v - f / 2, 0) << v << " vertices, " << f << " triangles";
    const hp::Assembly parts = hp::read_assembly(file, fine);
    ASSERT_EQ(parts.geometries.size(), 1u);
    EXPECT_NEAR(parts.geometries[0].exact_volume, volume, 1e-12 * volume);
    EXPECT_NEAR(parts.geometries[0].exact_area, area, 1e-9 * area);
}

TEST(Cad, TessellationWorkIsBoundedBeforeMeshing) {
    const fs::path file = write_step(BRepPrimAPI_MakeSphere(5).Shape(), "bound-sphere.step");
    auto expect_usage = [&](const hp::MeshLoadOptions& o, const std::string& says) {
        try {
            hp::load_mesh(file, o);
            FAIL() << "meshed with linear " << o.linear_deflection << ", angular " << o.angular_deflection;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::usage) << e.what();
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    };
    hp::MeshLoadOptions tiny;
    tiny.linear_deflection = 0.01 / 2e6;  // the sphere is 0.01 m across: 2 x 10^6 times the tolerance
    expect_usage(tiny, "times smaller than the shapes' extent");
    hp::MeshLoadOptions tiny_voxel;
    tiny_voxel.voxel_size = 1e-8;  // 0.25 x 1e-8: 4 x 10^6
    expect_usage(tiny_voxel, "--linear-deflection or --voxel-size");
    hp::MeshLoadOptions sharp;
    sharp.angular_deflection = 0.001;
    expect_usage(sharp, "--angular-deflection must be at least 0.01");
    // A fine tolerance well inside the bound (10^3 times the extent) is meshed.
    hp::MeshLoadOptions fine;
    fine.linear_deflection = 0.01 / 1e3;
    EXPECT_GT(hp::load_mesh(file, fine).diagnostics.triangles, 500u);
}

TEST(Cad, IgesBoxAndCylinder) {
    const fs::path box = write_iges(BRepPrimAPI_MakeBox(10, 20, 30).Shape(), "box.iges");
    const hp::LoadedMesh b = hp::load_mesh(box);
    EXPECT_EQ(b.tessellation.format, "iges");
    EXPECT_EQ(b.tessellation.file_unit, "mm");
    expect_within_bound(b, 6e-6, 2.2e-3);
    const fs::path cyl = write_iges(BRepPrimAPI_MakeCylinder(5, 10).Shape(), "cylinder.igs");
    hp::MeshLoadOptions fine;
    fine.linear_deflection = 0.00002;
    const hp::LoadedMesh c = hp::load_mesh(cyl, fine);
    expect_within_bound(c, pi * 0.005 * 0.005 * 0.01, 2 * pi * 0.005 * 0.005 + 2 * pi * 0.005 * 0.01);
}

TEST(Cad, AssemblyInstancesSharePinGeometryAndKeepPlacements) {
    const fs::path file = write_fixture();
    const hp::Assembly a = hp::read_assembly(file);
    ASSERT_EQ(a.parts.size(), 5u);
    ASSERT_EQ(a.geometries.size(), 2u);
    EXPECT_EQ(a.units, "m");
    const hp::AssemblyPart& plate = a.parts[0];
    EXPECT_NE(plate.name.find("plate"), std::string::npos) << plate.name;
    EXPECT_EQ(a.geometries[plate.geometry].instances, 1u);
    for (int i = 0; i < 4; ++i) {
        const hp::AssemblyPart& p = a.parts[static_cast<std::size_t>(i) + 1];
        EXPECT_NE(p.name.find("pin" + std::to_string(i + 1)), std::string::npos) << p.name;
        EXPECT_EQ(p.geometry, a.parts[1].geometry);
        EXPECT_EQ(a.geometries[p.geometry].instances, 4u);
        EXPECT_NEAR(p.placement.position.x, kPins[i].x / 1000, 1e-15);
        EXPECT_NEAR(p.placement.position.y, kPins[i].y / 1000, 1e-15);
        EXPECT_NEAR(p.placement.position.z, 0.006, 1e-15);
        EXPECT_NEAR(p.placement.quaternion[0], std::cos(kPins[i].angle / 2), 1e-12);
        EXPECT_NEAR(p.placement.quaternion[3], std::sin(kPins[i].angle / 2), 1e-12);
    }
    const double rm = kPinRadius / 1000, hm = kPinHeight / 1000;
    const hp::AssemblyGeometry& pin = a.geometries[a.parts[1].geometry];
    EXPECT_NEAR(pin.exact_volume, pi * rm * rm * hm, 1e-15);
    EXPECT_NEAR(pin.exact_area, 2 * pi * rm * rm + 2 * pi * rm * hm, 1e-12);
    // --part: the pin in its own frame, closed; flattened: the plate and four pins, placed.
    hp::MeshLoadOptions one;
    one.part = "@" + std::to_string(a.parts[1].geometry);
    const hp::LoadedMesh p = hp::load_mesh(file, one);
    EXPECT_TRUE(p.diagnostics.watertight);
    EXPECT_NEAR(p.diagnostics.bbox.min.z, 0, 1e-15);
    EXPECT_NEAR(p.diagnostics.bbox.max.z, hm, 1e-15);
    const hp::LoadedMesh all = hp::load_mesh(file);
    EXPECT_EQ(all.diagnostics.components, 5u);
    EXPECT_EQ(all.diagnostics.triangles, 12 + 4 * p.diagnostics.triangles);
    EXPECT_NEAR(all.diagnostics.signed_volume, 0.04 * 0.04 * 0.005 + 4 * p.diagnostics.signed_volume, 1e-12);
}

TEST(Cad, OpenSurfaceIsAnOpenMeshAndCurvesAreRefused) {
    const hp::LoadedMesh m = hp::load_mesh(write_step(sheet(), "sheet.step"));
    EXPECT_GT(m.diagnostics.boundary_edges, 0u);
    EXPECT_FALSE(m.diagnostics.watertight);
    const hp::Assembly a = hp::read_assembly(temp_dir() / "sheet.step");
    EXPECT_LT(a.geometries[0].exact_volume, 0);
    EXPECT_NEAR(a.geometries[0].exact_area, 1e-4, 1e-15);

    const fs::path curve = write_step(BRepBuilderAPI_MakeEdge(gp_Pnt(0, 0, 0), gp_Pnt(10, 0, 0)).Shape(), "edge.step");
    try {
        hp::load_mesh(curve);
        FAIL() << "a STEP file with only a curve was read";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("no solid and no surface"), std::string::npos) << e.what();
    }
}

TEST(Cad, StepBoxVoxelizesAsTheSameBoxInObj) {
    // Both in millimetres, with numbers a float holds exactly (Assimp reads OBJ in single precision).
    const fs::path step = write_step(BRepPrimAPI_MakeBox(gp_Pnt(-7.8125, -3.90625, 0), 15.625, 7.8125, 31.25).Shape(), "box-dyadic.step");
    const fs::path obj = temp_dir() / "box-dyadic.obj";
    std::ofstream(obj) << "v -7.8125 -3.90625 0\nv 7.8125 -3.90625 0\nv 7.8125 3.90625 0\nv -7.8125 3.90625 0\n"
                          "v -7.8125 -3.90625 31.25\nv 7.8125 -3.90625 31.25\nv 7.8125 3.90625 31.25\nv -7.8125 3.90625 31.25\n"
                          "f 1 4 3\nf 1 3 2\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    hp::MeshLoadOptions mm;
    mm.units = "mm";
    const hp::LoadedMesh a = hp::load_mesh(step), b = hp::load_mesh(obj, mm);
    EXPECT_EQ(a.units, b.units);
    const hp::GridSpec grid = hp::grid_around(b.diagnostics.bbox, 0.001, 2);
    const hp::LayerMap va = hp::voxelize(a.mesh, grid, {}), vb = hp::voxelize(b.mesh, grid, {});
    EXPECT_EQ(va.slices, vb.slices);
}

TEST(Cad, ToolsRefuseDamagedFilesWithExitCode3) {
    const fs::path dir = temp_dir();
    spill(dir / "empty.step", "");
    EXPECT_EQ(run("haptic-dump " + (dir / "empty.step").string()), 3);
    spill(dir / "text.step", "this is not a STEP file\n");
    EXPECT_EQ(run("haptic-dump " + (dir / "text.step").string()), 3);
    const fs::path curve = write_step(BRepBuilderAPI_MakeEdge(gp_Pnt(0, 0, 0), gp_Pnt(10, 0, 0)).Shape(), "curve.step");
    EXPECT_EQ(run("haptic-dump " + curve.string()), 3);
    // Cut short and bit-flipped copies of every test file: cad_damage_test.cpp.
}

TEST(Cad, OutputsAreTheSameBytesForAnyThreadCount) {
    const fs::path fixture = write_fixture();
    const fs::path dir = temp_dir();
    for (int threads : {1, 2})
        ASSERT_EQ(run("haptic-voxelize " + fixture.string() + " --resolution 48 --quiet --threads " + std::to_string(threads) +
                      " -o " + (dir / ("fixture-t" + std::to_string(threads) + ".vdb")).string()),
                  0);
    EXPECT_EQ(slurp(dir / "fixture-t1.vdb"), slurp(dir / "fixture-t2.vdb"));
    for (int threads : {1, 2})
        ASSERT_EQ(run("haptic-distance " + fixture.string() + " " + (dir / "fixture-t1.vdb").string() + " --quiet --threads " +
                      std::to_string(threads) + " -o " + (dir / ("fixture-d" + std::to_string(threads) + ".vdb")).string()),
                  0);
    EXPECT_EQ(slurp(dir / "fixture-d1.vdb"), slurp(dir / "fixture-d2.vdb"));
}
