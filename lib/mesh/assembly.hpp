#pragma once
// lib/mesh/assembly — a mesh file as parts: the node graph kept instead of flattened.
//
// Contract: read_assembly() reads what load_mesh() reads (Assimp; the same checks of the file;
// STEP and IGES through mesh/cad.hpp, whose parts are XCAF's shape instances) and keeps its structure. Every node that carries meshes is a part: its name is the node path
// below the root ("frame/left/bolt"), made unique with "#2", "#3"...; its geometry is the triangles
// of its meshes in the node's own frame; its placement is the accumulated node transform.
// Geometries are shared by content: two nodes whose meshes hold the same triangles (glTF meshes
// referenced by several nodes, COLLADA instance_node/instance_geometry, 3MF components) are one
// geometry with several instances, whatever the importer did with the meshes. OBJ `o`/`g` groups
// are parts in the identity frame.
// A placement must be rigid to be queried: a transform with a uniform scale keeps its rotation and
// translation as the placement and bakes the scale into the geometry (instances with the same
// scale still share it); a reflection or a non-uniform scale is baked whole into a geometry of the
// part's own, placed at its translation. Each bake is said in `notes`.
// Units: --units/--scale multiply the placements' translations and the geometries (prepare_mesh
// does the geometry, so it welds exactly as load_mesh does on a single part).
// Errors: hp::Error(bad_input) naming the file (and the part): what load_mesh refuses, a node
// transform with NaN or infinity, a node graph deeper than 1000 (a cycle in a broken file), no
// part with triangles. Order: parts in depth-first node order (children in file order);
// geometries in the order of their first part. Deterministic.
// Selection (MeshLoadOptions::part, `--part`): a part's name, its index, or "@G" for geometry G;
// load_mesh() then returns that part's geometry in its own frame, welded and diagnosed as usual.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp {

// A rigid placement: world point = R(quaternion) p + position. `matrix` holds the same transform
// as a row-major 4x4 (last row 0 0 0 1).
struct Placement {
    Vec3d position;
    std::array<double, 4> quaternion{1, 0, 0, 0};  // w, x, y, z; unit, w >= 0
    std::array<double, 16> matrix{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

    Vec3d apply(const Vec3d& p) const;  // R p + t, with the matrix
};

// The placement of a rotation matrix (rows, orthonormal within rounding) and a translation; the
// quaternion by Shepperd's method, normalised, its w made non-negative, and the matrix rebuilt
// from it so that both forms agree.
Placement make_placement(const std::array<std::array<double, 3>, 3>& rotation, const Vec3d& position);
// The placement of a quaternion (w, x, y, z; normalised here) and a translation.
Placement make_placement(std::array<double, 4> quaternion, const Vec3d& position);

struct AssemblyGeometry {
    std::string id;            // "g0", "g1", ...: files are keyed by it
    TriMesh soup;              // the triangles in the geometry's own frame, before --units/--scale
    std::size_t first_part = 0;
    std::size_t instances = 0;
    std::string baked;         // "" or what was baked in: "scale 0.5", "reflection", "non-uniform scale"
    // STEP/IGES: the exact surface area and volume of its solids (BRepGProp), in the soup's units
    // (before --units/--scale); negative: unknown (a mesh file, or a baked geometry).
    double exact_area = -1, exact_volume = -1;
};

struct AssemblyPart {
    std::string name;          // node path, unique
    std::size_t index = 0;     // position in `parts`
    std::size_t geometry = 0;  // index into `geometries`
    Placement placement;       // geometry frame -> world, in the output units
    std::size_t dropped_primitives = 0;  // points and lines of its meshes
};

struct Assembly {
    std::vector<AssemblyGeometry> geometries;
    std::vector<AssemblyPart> parts;
    std::vector<std::string> notes;  // bakes, parts without triangles
    std::string source_name, source_hash;
    std::string units;               // "m" when --units was given, "" otherwise (as LoadedMesh)
    double factor = 1.0;             // the units' factor times the scale, applied to placements
    Tessellation tessellation;       // STEP/IGES: how the geometries were tessellated

    // The part a selector names (a name, an index, "@G"); hp::Error(usage) listing what exists otherwise.
    const AssemblyPart& select(const std::string& selector, const std::string& where) const;
};

// Reads `path` as an assembly (see above). Uses options.scale and options.units for the
// placements; the geometries stay in the file's units (prepare_geometry applies them).
Assembly read_assembly(const std::filesystem::path& path, const MeshLoadOptions& options = {});

// Geometry g welded, cleaned and diagnosed by prepare_mesh with `options` (units and scale
// applied), in its own frame; source name and hash are the file's.
LoadedMesh prepare_geometry(const Assembly& assembly, std::size_t g, const MeshLoadOptions& options,
                            const std::string& where);

// A part's world bounds from its geometry's local bounds (the 8 corners placed), and a sphere
// around the placed geometry (the local box's centre and half diagonal).
Aabb world_bounds(const Aabb& local, const Placement& placement);

// --parts: {"parts": [{name, index, geometry, instances, triangles, position, quaternion, matrix,
// local_bounds, world_bounds}], "geometries": [{id, first_part, instances, triangles, baked}],
// "notes": [...]}; `prepared` holds the prepared geometries (their triangles and bounds).
nlohmann::json parts_json(const Assembly& assembly, const std::vector<LoadedMesh>& prepared);
std::string format_parts(const Assembly& assembly, const std::vector<LoadedMesh>& prepared);

}  // namespace hp
