#pragma once
// lib/mesh/assembly_build — how a reader of lib/mesh (Assimp's node graph in assembly.cpp, the
// STEP/IGES reader in cad_occt.cpp) adds parts to an Assembly: names made unique, placements made
// rigid with their scale or reflection baked, geometries shared by content (internal to lib/mesh).
#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "mesh/assembly.hpp"

namespace hp {

using Mat3 = std::array<std::array<double, 3>, 3>;

class AssemblyBuilder {
public:
    // The triangles of a part in its own frame with `linear` applied to them (the identity unless
    // a scale or a reflection is baked); `dropped` counts the points and lines left out.
    using SoupOf = std::function<TriMesh(const Mat3& linear, std::size_t& dropped)>;

    AssemblyBuilder(Assembly& out, std::string where) : out_(out), where_(std::move(where)) {}

    // What a reader knows of a part's triangles without copying them: a key of their content (equal
    // for the same triangles), how many there are and the points and lines left out.
    struct Content {
        std::string key;
        std::size_t triangles = 0, dropped = 0;
    };

    // A part named `path` (made unique) whose transform to the world is x -> a x + t (file units;
    // out.factor is applied to t). A part without triangles is left out with a note. With
    // `content`, the part's triangles are copied (soup_of) only when they make a new geometry;
    // without, they are copied and hashed for every part.
    // Errors: hp::Error(bad_input) for a NaN or infinite entry of a or t.
    void add_part(const std::string& path, const Mat3& a, const Vec3d& t, const SoupOf& soup_of,
                  const Content* content = nullptr);

private:
    std::string unique_name(const std::string& name);

    Assembly& out_;
    std::string where_;
    std::map<std::string, std::size_t> geometry_of_;  // content key -> geometry
    std::map<std::string, std::size_t> name_uses_;
};

}  // namespace hp
