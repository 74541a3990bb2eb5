#pragma once
// lib/mesh/cad — STEP (ISO 10303-21) and IGES files: their parts and assemblies through
// OpenCASCADE, tessellated (internal to lib/mesh; docs/cad.md). Only cad_occt.cpp includes
// OpenCASCADE, and only when the build found it (HP_HAVE_OCCT); without it a CAD file is refused.
// cad_occt.cpp is built into a module of its own, hapticprep_cad.so, loaded on the first STEP or
// IGES file read: a tool that reads none does not load OpenCASCADE's libraries at start-up.
//
// Contract: read_cad_assembly() gives what read_assembly() gives for a mesh file. Parts: every
// shape instance of the XCAF assembly tree (a component: its solids together), and every solid of
// a free top-level shape that is not an assembly; a part's name is its path of instance names.
// Shapes instanced several times are one geometry. Units: the geometries and placements are in
// metres (the file's length unit converted) unless options.units is given, which overrides the
// file's unit (a warning in `notes`); options.scale applies as for any file. Tessellation:
// BRepMesh_IncrementalMesh, shared edges meshed once, so a closed solid gives a closed mesh; the
// chord tolerance is options.linear_deflection, else 0.25 x options.voxel_size, else 0.25 x the
// file's longest side / options.resolution (output units); the same for any thread count. A face
// that does not mesh leaves a hole and a note naming it. Errors: hp::Error(bad_input) naming the
// file: not readable as STEP/IGES, no solid and no surface, no triangle at all.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/version.hpp"
#include "mesh/assembly.hpp"

namespace hp {

// "step" when `head` (the file's first bytes) starts with ISO-10303-21; (after blanks), "iges"
// when its first line has 'S' in column 73, else "".
std::string_view cad_kind(std::string_view head);

// cad_kind of the file's first 128 bytes, or of its extension (.step .stp .iges .igs, any case)
// when they are neither, so that a damaged CAD file is refused as one; "" for other files.
std::string_view cad_file_kind(const std::filesystem::path& path);
inline bool is_cad_file(const std::filesystem::path& path) { return !cad_file_kind(path).empty(); }

// Whether this build reads STEP and IGES (it found OpenCASCADE).
bool cad_supported();

Assembly read_cad_assembly(const std::filesystem::path& path, const MeshLoadOptions& options);

// The module's file once read_cad_assembly() has loaded it (it loads it if not yet); empty when the
// build has no OpenCASCADE or the module was not found.
std::filesystem::path cad_module_path();

// What the module and its caller must agree on: the version and the layouts they pass.
inline std::string cad_abi_key() {
    return std::string(kVersion) + "/" + std::to_string(sizeof(Assembly)) + "/" + std::to_string(sizeof(AssemblyPart)) +
           "/" + std::to_string(sizeof(AssemblyGeometry)) + "/" + std::to_string(sizeof(MeshLoadOptions)) + "/" +
           std::to_string(sizeof(TriMesh));
}

}  // namespace hp
