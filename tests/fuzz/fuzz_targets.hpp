#pragma once
// tests/fuzz — one entry function per reader of hapticprep, shared by the libFuzzer binaries
// (fuzz_main.cpp, built with clang by `make fuzz`) and the replay of the kept corpus and the
// regression inputs in `make test` (replay_main.cpp, built with the normal compiler).
//
// Each entry hands the bytes to the same function the tools call. The function may refuse them
// with hp::Error (a clean refusal: exit 3 or 2 in a tool); anything else that escapes is a bug and
// aborts. A successful read of one of our formats is written back, read again and compared.
// The entries for our checksummed formats (.hps, .hcfm, .hoct, .hsmp, .vdb) run the reader twice: on the
// bytes as given (the checksum gate) and on the bytes with their checksums recomputed, so that the
// parser behind the gate sees the mutated contents too.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hp::fuzz {

using Entry = void (*)(const std::uint8_t* data, std::size_t size);

// Our binary formats (targets_container.cpp, targets_vdb.cpp).
void hps(const std::uint8_t* data, std::size_t size);           // pointshell and point-sphere tree
void hcfm(const std::uint8_t* data, std::size_t size);          // closest feature map
void hoct(const std::uint8_t* data, std::size_t size);          // octree
void hsmp(const std::uint8_t* data, std::size_t size);          // prepared sampler
void vdb_field(const std::uint8_t* data, std::size_t size);     // voxelmap / distance / band, as the query loads them
void vdb_shell_field(const std::uint8_t* data, std::size_t size);  // voxelmap / distance, as the pointshell stage reads them
void vdb_gradient(const std::uint8_t* data, std::size_t size);  // the gradient grid, as haptic-dump --check reads it
// JSON files (targets_text.cpp).
void pipeline(const std::uint8_t* data, std::size_t size);  // pipeline JSON; leading "--set a.b=c" lines are overrides
void manifest(const std::uint8_t* data, std::size_t size);  // manifest.json (--resume, --merge)
void poses(const std::uint8_t* data, std::size_t size);     // poses file of haptic-query
void scene(const std::uint8_t* data, std::size_t size);     // scene.json of haptic-pipeline --assembly
// Meshes through the import layer (targets_mesh.cpp): the extension picks Assimp's importer.
void mesh_obj(const std::uint8_t* data, std::size_t size);
void mesh_stl(const std::uint8_t* data, std::size_t size);
void mesh_ply(const std::uint8_t* data, std::size_t size);
void mesh_off(const std::uint8_t* data, std::size_t size);
void mesh_gltf(const std::uint8_t* data, std::size_t size);
void mesh_glb(const std::uint8_t* data, std::size_t size);
void mesh_dae(const std::uint8_t* data, std::size_t size);
void mesh_3mf(const std::uint8_t* data, std::size_t size);
// STEP and IGES through the same import call (the OpenCASCADE module; inputs above 32 KiB skipped).
void step(const std::uint8_t* data, std::size_t size);
void iges(const std::uint8_t* data, std::size_t size);

// lib/bullet's readers (targets_bullet.cpp; only when lib/bullet is built).
void bullet_scene(const std::uint8_t* data, std::size_t size);  // haptic-sim's scene file
void hacd_cache(const std::uint8_t* data, std::size_t size);    // a cached HACD decomposition

struct Target {
    const char* name;
    Entry entry;
};
// Every target, in the order of the table `make fuzz` prints.
const std::vector<Target>& all_targets();

// Support (fuzz_support.cpp).
// A file of this process's scratch folder (made on first use, removed at exit) holding `bytes`.
std::filesystem::path scratch_file(const std::string& name, std::string_view bytes);
std::filesystem::path scratch_dir();
// The clean refusals (hp::Error caught by refused_or_ran) so far in this process: the replay's
// --must-read checks with it that every seed reads.
std::size_t refusals();
void count_refusal();
// A failed invariant: prints the target and what differs, then aborts (a finding).
[[noreturn]] void violated(const char* target, const std::string& what);
// Runs `read` and treats hp::Error as a clean refusal (returns false); anything else escapes.
template <class F>
bool refused_or_ran(F&& read);
// Runs a read that must succeed (the second read of a round trip) and returns its result;
// hp::Error there is a finding.
template <class F>
auto must_read(const char* target, F&& read);

// Recomputes the container's CRC-32s, section sizes, section count and file size after a
// mutation, so that the bytes pass the checksum gate (a harness-side fix-up; the readers are
// unchanged). Bytes without the container's magic are returned as they are.
std::string fix_container_checksums(std::string bytes);
// Recomputes (or appends) the XXH3-64 trailer of one of our .vdb files.
std::string fix_vdb_trailer(std::string bytes);
// A mutation of a .vdb file's framing (the VDB targets' libFuzzer mutator, fuzz_main.cpp): one
// grid's byte offsets moved, or the file cut, by up to the trailer's size and a few bytes, near a
// grid's end; then the trailer recomputed, or left off. Empty when the bytes hold no grid offsets.
std::string mutate_vdb_framing(std::string bytes, unsigned seed);

}  // namespace hp::fuzz

#include "core/error.hpp"

template <class F>
bool hp::fuzz::refused_or_ran(F&& read) {
    try {
        read();
        return true;
    } catch (const hp::Error&) {
        count_refusal();
        return false;
    }
}

template <class F>
auto hp::fuzz::must_read(const char* target, F&& read) {
    try {
        return read();
    } catch (const Error& e) {
        violated(target, std::string("a file written from a successful read is refused: ") + e.what());
    }
}
