// Fuzz entries of the container formats: .hps (pointshell, point-sphere tree), .hcfm, .hoct.
// Each runs the tools' reader on the bytes as given and on the bytes with their checksums fixed
// up; a successful read is written back, read again and written again: both writes must give the
// same bytes (the reader keeps everything the writer stores).
#include "core/atomic_file.hpp"
#include "formats/cfm.hpp"
#include "formats/octree.hpp"
#include "formats/shell.hpp"
#include "fuzz_targets.hpp"

namespace hp::fuzz {

namespace {

std::string as_string(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `check` on the input and, when it differs, on its fixed-up copy.
template <class Check>
void both_ways(const std::uint8_t* data, std::size_t size, Check check) {
    std::string raw = as_string(data, size);
    std::string fixed = fix_container_checksums(raw);
    const bool same = fixed == raw;
    check(std::move(raw));
    if (!same) check(std::move(fixed));
}

std::string serialize(const ShellFile& f) {
    return serialize_shell_file(f.metadata, f.shell, f.tree ? &*f.tree : nullptr);
}

}  // namespace

void hps(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](std::string bytes) {
        ShellFile f;
        if (!refused_or_ran([&] { f = parse_shell_file(std::move(bytes), "input.hps"); })) return;
        if (f.shell.points.size() != f.shell.normals.size() || f.shell.points.size() != f.shell.triangles.size())
            violated("hps", "arrays of different lengths");
        if ((f.kind == container::Kind::tree) != f.tree.has_value()) violated("hps", "kind and tree disagree");
        const std::string first = serialize(f);
        const ShellFile again = must_read("hps", [&] { return parse_shell_file(first, "written.hps"); });
        if (serialize(again) != first) violated("hps", "write, read, write gives other bytes");
    });
}

void hcfm(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](std::string bytes) {
        const auto input = scratch_file("input.hcfm", bytes);
        CfmFile f;
        if (!refused_or_ran([&] { f = read_cfm_file(input); })) return;
        if (f.map.spheres.empty()) violated("hcfm", "a map without spheres was accepted");
        const auto written = scratch_dir() / "written.hcfm";
        write_cfm_file(written, f.metadata, f.map);
        const std::string first = read_file(written);
        const CfmFile again = must_read("hcfm", [&] { return read_cfm_file(written); });
        write_cfm_file(written, again.metadata, again.map);
        if (read_file(written) != first) violated("hcfm", "write, read, write gives other bytes");
    });
}

void hoct(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](std::string bytes) {
        const auto input = scratch_file("input.hoct", bytes);
        OctreeFile f;
        if (!refused_or_ran([&] { f = read_octree_file(input); })) return;
        if (f.tree.level_begin.size() != static_cast<std::size_t>(f.tree.levels) + 1)
            violated("hoct", "level_begin does not have levels + 1 entries");
        const auto written = scratch_dir() / "written.hoct";
        write_octree_file(written, f.metadata, f.tree);
        const std::string first = read_file(written);
        const OctreeFile again = must_read("hoct", [&] { return read_octree_file(written); });
        write_octree_file(written, again.metadata, again.tree);
        if (read_file(written) != first) violated("hoct", "write, read, write gives other bytes");
    });
}

}  // namespace hp::fuzz
