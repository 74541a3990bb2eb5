#pragma once
// lib/mesh/obj_native — Wavefront OBJ read without Assimp, for the files whose reading by Assimp
// 5.2.5 (its OBJ importer, then aiProcess_Triangulate | aiProcess_SortByPType) it reproduces
// exactly (internal to lib/mesh; import.cpp chooses it; docs/haptic-dump.md says what it covers).
//
// Contract: read_obj_native() returns the scene Assimp makes of the file (the nodes below the root,
// one per `o`/`g` object in file order, with Assimp's names; their meshes, split at `usemtl` as
// Assimp splits them; every face corner a vertex of its mesh, in face order; quads cut into two
// triangles at the corner Assimp cuts them), coordinates bit for bit as Assimp's fast_atof reads
// them into floats. It declines (nullopt) every file it cannot be sure of, including every file
// Assimp refuses, so that the caller hands that file to Assimp unchanged: a statement or a number
// outside its grammar, a face of other than 3 or 4 corners, an index out of range, no face, a
// byte Assimp's line reader treats specially (NUL, form feed, a backslash that continues a line).
// It never refuses a file itself. Cost: one pass over the bytes; memory for the positions (12
// bytes each) and the face corners (4 bytes each, 12 per triangle).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mesh/mesh.hpp"

namespace hp {

struct ObjMesh {
    std::vector<std::uint32_t> corners;                   // each mesh vertex: an index into positions
    std::vector<std::array<std::uint32_t, 3>> triangles;  // indices into corners
};

struct ObjNode {
    std::string name;                   // the `o` or `g` name, or "defaultobject"
    std::vector<std::uint32_t> meshes;  // indices into ObjScene::meshes; none when it has no face
};

struct ObjScene {
    std::vector<std::array<float, 3>> positions;  // the `v` lines
    std::vector<ObjMesh> meshes;
    std::vector<ObjNode> nodes;  // the children of the root, which holds no mesh; no node is transformed
};

// Appends a mesh's vertices (one per corner, placed by `place(x, y, z)`, floats to a Vec3d) and
// its triangles to `soup`, as the readers of Assimp's scenes append an aiMesh.
template <typename Place>
void append_obj_mesh(const ObjScene& obj, const ObjMesh& mesh, TriMesh& soup, const Place& place) {
    const auto base = static_cast<std::uint32_t>(soup.vertices.size());
    for (std::uint32_t c : mesh.corners) {
        const std::array<float, 3>& p = obj.positions[c];
        soup.vertices.push_back(place(p[0], p[1], p[2]));
    }
    for (const auto& t : mesh.triangles) soup.triangles.push_back({base + t[0], base + t[1], base + t[2]});
}

// The scene of an OBJ file's bytes, or nullopt when the file is not one read natively.
std::optional<ObjScene> read_obj_native(std::string_view bytes);

// A number token as Assimp 5.2.5's fast_atof reads it into a float: an optional sign, digits with
// an optional fraction (its first 15 digits kept), an optional exponent. False for a token outside
// that form (nan, inf, a comma, trailing text, more than 18 digits before the point or in the
// exponent), where Assimp reads a prefix, throws or overflows.
bool parse_obj_real(std::string_view token, float& out);

}  // namespace hp
