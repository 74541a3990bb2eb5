#pragma once
// lib/mesh/ply_check — a PLY file's counts read as Assimp 5.2's PLY reader reads them, before it
// reads the file (internal to lib/mesh, called by import.cpp's checks of a file's bytes).
// docs/fuzzing.md lists each refusal and the finding behind it.
#include <cstddef>
#include <cstdint>
#include <string>

namespace hp {

// The instance count of a PLY "element" line as Assimp's PLY reader takes it (PlyParser.cpp): the
// number after a name it knows (vertex, face, tristrips, edge, material; TextureFile has none), but
// for any other name the digits that name itself starts with, as unsigned decimal digits wrapping
// at 2^32.
std::uint32_t assimp_ply_count(const std::string& line);

// ASCII data (from byte `data` of `bytes`, the whole file) against its header's list properties:
// the first data line (1-based) whose list count exceeds the values left on the line, or 0. Linear
// in the file's size.
std::size_t ply_list_overrun(const std::string& bytes, std::size_t data);

}  // namespace hp
