#pragma once
// lib/mesh/cad_text — checks of a STEP or IGES file's text before OpenCASCADE reads it (called by
// the CAD module, lib/mesh/cad_occt.cpp; no OpenCASCADE header here). Each refusal is one
// fail_input naming the file; docs/cad.md "Bad files" and docs/fuzzing.md list what they defend.
#include <string>

namespace hp {

// Real numbers beyond a double's range (format "STEP" or "IGES").
void check_cad_numbers(const std::string& where, const std::string& format, const std::string& bytes);

// STEP entity numbers defined twice (outside &SCOPE), and entities whose references form a cycle.
void check_step_references(const std::string& where, const std::string& bytes);

}  // namespace hp
