#pragma once
// lib/mesh/collada_check — a COLLADA file's bytes checked, before Assimp reads them, against what
// Assimp 5.2's COLLADA parser trusts without checking (internal to lib/mesh, called by import.cpp).
//
// By the text, not by an XML parser (Assimp's parser reads what a strict one refuses): the integer
// lists hold integers, the arrays carry their count, no count exceeds the file's bytes, the
// primitives carry the index lists their counts need, and every <vertices> names its positions
// (docs/fuzzing.md lists each refusal and the finding behind it). Linear in the file's size.
// Errors: hp::Error(bad_input) naming the file and the byte of the element at fault.
#include <string>

namespace hp {

// `bytes` is the whole file, `where` its name for the messages.
void check_collada(const std::string& bytes, const std::string& where);

}  // namespace hp
