#pragma once
// lib/mesh/gltf_check — a glTF 2.0 document checked, before Assimp reads it, against what Assimp
// 5.2's glTF 2.0 importer trusts without checking (internal to lib/mesh, called by import.cpp).
//
// The importer copies an accessor's elements from its buffer after checking only part of their
// extent, and allocates faces for a triangle strip or fan from a vertex count minus 2 in unsigned
// arithmetic. So every buffer view must lie inside its buffer (a binary file's buffer 0 is its BIN
// chunk), every accessor's elements inside its buffer view, a sparse accessor's indices and values
// inside theirs, every index a primitive, a morph target, an animation or a skin names must exist,
// and the counts must be ones the importer can take (docs/fuzzing.md lists each refusal and the
// finding behind it). Everything the glTF 2.0 specification requires of a valid file passes.
// Errors: hp::Error(bad_input) naming the file and the object at fault.
#include <string>
#include <string_view>

namespace hp {

// `json` is a `.gltf` file or a binary file's JSON chunk; `bin` a binary file's BIN chunk (empty
// when it has none; unused when `binary` is false). JSON that does not parse is refused when
// `must_parse` (a file of a glTF extension or header), else left to the caller, as are documents
// that are not glTF 2.0 (asset.version not "2..."): returns whether the document was checked.
bool check_gltf2_document(std::string_view json, bool binary, std::string_view bin, bool must_parse,
                          const std::string& where);

}  // namespace hp
