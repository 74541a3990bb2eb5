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

// Assimp 5.2's reading of the file followed on its bytes, as far as what it allocates depends on
// them: its header parser's elements and properties (a "comment" line can be an element to it), its
// line buffer, the list counts it reads in ASCII and binary data. Returns what Assimp would allocate
// beyond the file's bytes or read past its end (a phrase for the error message), or "". Linear in the
// file's size.
std::string ply_assimp_overrun(const std::string& bytes);

}  // namespace hp
