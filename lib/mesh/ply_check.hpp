#pragma once
// lib/mesh/ply_check — a PLY file's counts read as Assimp 5.2's PLY reader reads them, before it
// reads the file (internal to lib/mesh, called by import.cpp's checks of a file's bytes).
// docs/fuzzing.md lists each refusal and the finding behind it.
#include <cstddef>
#include <string>

namespace hp {

// The instance count of a PLY "element" line as the checks take it: the number the line gives, or
// the count Assimp's PLY reader takes (ply_check.cpp) when that is larger or the line gives none.
double ply_element_count(const std::string& line);

// ASCII data (from byte `data` of `bytes`, the whole file) against its header's list properties:
// the first data line (1-based) whose list count exceeds the values left on the line, or 0. Linear
// in the file's size.
std::size_t ply_list_overrun(const std::string& bytes, std::size_t data);

}  // namespace hp
