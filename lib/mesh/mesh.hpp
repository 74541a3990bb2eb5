#pragma once
// lib/mesh — triangle meshes in, welded and diagnosed.
//
// Contract: load_mesh() reads any format Assimp reads (and STEP/IGES through OpenCASCADE when the
// build has it: mesh/cad.hpp, docs/cad.md), applies node transforms, triangulates,
// drops points and lines, applies --scale/--units, welds vertices by position (tolerance
// relative to the bounding-box diagonal), drops degenerate and duplicate triangles, and computes
// the diagnostics below on the welded mesh. Units: whatever the file holds times the scale; all
// later stages work in these world units. Errors: hp::Error(bad_input) naming the file (missing,
// empty, unreadable, no triangles, NaN/Inf coordinates, not a mesh).
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "math/vec.hpp"

namespace hp {

struct TriMesh {
    std::vector<Vec3d> vertices;
    std::vector<std::array<std::uint32_t, 3>> triangles;  // counter-clockwise seen from outside

    Aabb bounds() const;
};

struct MeshDiagnostics {
    std::size_t vertices = 0;
    std::size_t triangles = 0;
    Aabb bbox;
    std::size_t boundary_edges = 0;      // edges used by exactly one triangle
    std::size_t nonmanifold_edges = 0;   // edges used by three or more triangles
    std::size_t inconsistent_edges = 0;  // manifold edges whose two triangles traverse it the same way
    std::size_t components = 0;          // connected by shared vertices
    // Internal edges (van Waveren): manifold, consistently oriented edges whose two triangles face
    // each other (concave) or lie in one plane (flat); another mesh never touches one first.
    std::size_t internal_edges = 0;      // concave + flat
    std::size_t concave_edges = 0;
    std::size_t edges = 0;               // distinct edges
    double signed_volume = 0;            // positive for outward-wound closed meshes
    bool watertight = false;             // no boundary, no non-manifold, no inconsistent edges
    std::string orientation;             // "outward", "inward", "mixed", or "repaired" when import
                                         // flipped faces (load_mesh, MeshLoadOptions::repair_orientation)
    std::size_t flipped_faces = 0;       // triangles whose winding import reversed
    std::size_t non_orientable_parts = 0;  // parts import left as they were: non-orientable
    std::size_t non_manifold_parts = 0;    // ... or with a non-manifold edge
    // What import did: welded vertices, dropped degenerate/duplicate triangles, dropped points/lines.
    std::size_t welded_vertices = 0;
    std::size_t dropped_degenerate = 0;
    std::size_t dropped_duplicate = 0;
    std::size_t dropped_primitives = 0;
};

struct MeshLoadOptions {
    double scale = 1.0;       // multiplies coordinates (after units)
    std::string units = "";   // "", "mm", "cm", "m" or "in": the file's unit; output is metres
                              // when given, the file's own unit otherwise
    double weld_tolerance = 1e-7;  // relative to the bounding-box diagonal
    bool repair_orientation = true;  // orient every part consistently, closed parts outward
                                     // (cavities inward); see mesh/orient.hpp
    std::string part;  // "": the whole file flattened; else one part in its own frame: its name,
                       // its index or "@G" for geometry G (mesh/assembly.hpp)
    // STEP and IGES (docs/cad.md): the tessellation's chord tolerance in output units (0: 0.25 x
    // voxel_size when that is known, else 0.25 x the file's longest side / resolution) and its
    // angular tolerance in radians. Other files ignore them.
    double linear_deflection = 0;
    double angular_deflection = 0.35;
    double voxel_size = 0;  // the voxel size the mesh is for, when known (0: unknown)
    int resolution = 128;   // ... else voxels along the longest side
};

// How a STEP or IGES file was tessellated (linear_deflection 0: the file is a mesh).
struct Tessellation {
    std::string format;            // "step", "iges"
    double linear_deflection = 0;  // output units
    double angular_deflection = 0; // radians
    std::string file_unit;         // the unit the file declares ("mm", "inch", ...)
    double seconds_read = 0, seconds_mesh = 0;
    std::string module;            // the file of the OpenCASCADE module that read it
};

struct LoadedMesh {
    TriMesh mesh;
    MeshDiagnostics diagnostics;
    std::string source_name;  // file name without folders
    std::string source_hash;  // hex64 of the file's bytes
    std::string units;        // units of the coordinates ("m", or "" when unknown)
    std::string part;         // a part was selected: "@G", its geometry (what files record)
    std::string part_name;    // ... and the part's name
    Tessellation tessellation;  // STEP/IGES: how the triangles were made
    std::vector<std::string> notes;  // STEP/IGES: what import says (faces that did not mesh, --units over the file's unit)
};

// The factor of a unit ("" and "m": 1, "mm", "cm", "in"); hp::Error(usage) for another.
double unit_factor(const std::string& units);

LoadedMesh load_mesh(const std::filesystem::path& path, const MeshLoadOptions& options = {});

// Whether `mesh` is the mesh that `file` (a `file_kind`: "voxelmap", "field", "tree") was made
// from, by the source hash the file recorded. Equal: returns "". Different: throws
// hp::Error(bad_input) "MESH: not the mesh FILE was made from (hash H, the KIND records R); use
// FORCE to proceed anyway" unless `force`, else returns that line ending "; proceeding (FORCE)"
// for the caller to print. `force_name`: how the caller spells the override ("--force", "force").
std::string check_source_hash(const std::string& mesh, const std::string& mesh_hash, const std::string& file,
                              const std::string& file_kind, const std::string& recorded, bool force,
                              const std::string& force_name);

// Weld, clean and diagnose a mesh given as a triangle soup (used by load_mesh and by tests).
// `where` names the source in error messages.
LoadedMesh prepare_mesh(TriMesh soup, const MeshLoadOptions& options, const std::string& where);

MeshDiagnostics diagnose(const TriMesh& mesh);

// The shared edge (v0, v1) of triangles t0 and t1 (traversed in opposite directions): 2 when the
// triangles face each other (the far corner of t1 lies in front of t0's plane by more than 1e-9
// of the lengths involved), 1 when they lie in one plane within that tolerance, 0 when convex.
int internal_edge_kind(const TriMesh& mesh, std::uint32_t t0, std::uint32_t t1, std::uint32_t v0, std::uint32_t v1);

// {"vertices":..,"triangles":..,"bbox":{"min":[..],"max":[..]},"boundary_edges":..,
//  "nonmanifold_edges":..,"inconsistent_edges":..,"components":..,"signed_volume":..,
//  "watertight":..,"orientation":..}
nlohmann::json to_json(const MeshDiagnostics& d);

// The diagnostics as aligned text lines, for the tools' human-readable summaries.
std::string format_diagnostics(const MeshDiagnostics& d);

}  // namespace hp
