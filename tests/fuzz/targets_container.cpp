// Fuzz entries of the container formats: .hps (pointshell, point-sphere tree), .hcfm, .hoct,
// .hsmp (prepared sampler). Each runs the tools' reader on the bytes as given and on the bytes with
// their checksums fixed up; a successful read is written back, read again and written again: both
// writes must give the same bytes (the reader keeps everything the writer stores).
#include <cstring>
#include <memory>
#include <new>

#include "core/atomic_file.hpp"
#include "formats/cfm.hpp"
#include "formats/octree.hpp"
#include "formats/sampler.hpp"
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

// The bytes at a 64-byte boundary (as a mapping starts on a page), in a heap block of exactly their
// size: a read past the file's end is a heap overflow the sanitizer reports, where a mapping would
// hide it in the rest of its last page.
std::shared_ptr<const char> aligned_copy(const std::string& bytes) {
    constexpr std::align_val_t kAlign{64};
    char* p = static_cast<char*>(::operator new(bytes.empty() ? 1 : bytes.size(), kAlign));
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    return std::shared_ptr<const char>(p, [](const char* q) { ::operator delete(const_cast<char*>(q), kAlign); });
}

// Points of the sampler's box and around it (the corners, the centre, outside on every side) and
// every sample of a grid of up to 2^15 voxels (a strided subset of a larger one): the lookups read
// every array. Returns the values, for comparison with another sampler.
std::vector<double> probe(const DistanceSampler& s) {
    const GridSpec& g = s.grid();
    std::vector<double> out;
    const Vec3d size{g.dims[0] * g.voxel_size, g.dims[1] * g.voxel_size, g.dims[2] * g.voxel_size};
    for (double f : {-0.5, 0.0, 0.37, 0.5, 1.0, 1.5}) {
        const Vec3d p = g.origin + Vec3d{f * size.x, (1 - f) * size.y, f * size.z};
        const Vec3d grad = s.gradient(p);
        out.insert(out.end(), {s.value(p), grad.x, grad.y, grad.z, s.gradient_value(p), s.upper_bound(p, 0.3 * size.x),
                               s.lipschitz(p, 0.1 * size.y)});
    }
    const std::size_t count = g.count(), step = std::max<std::size_t>(1, count >> 15);
    for (std::size_t n = 0; n < count; n += step) {
        const std::size_t i = n % std::size_t(g.dims[0]), j = n / std::size_t(g.dims[0]) % std::size_t(g.dims[1]),
                          k = n / (std::size_t(g.dims[0]) * std::size_t(g.dims[1]));
        out.push_back(s.sample(int(i), int(j), int(k)));
    }
    return out;
}

// Equal bit for bit (NaN samples included).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
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

void hsmp(const std::uint8_t* data, std::size_t size) {
    both_ways(data, size, [](std::string bytes) {
        const std::shared_ptr<const char> copy = aligned_copy(bytes);
        SamplerFile f;
        if (!refused_or_ran([&] { f = read_sampler(std::string_view(copy.get(), bytes.size()), copy, "input.hsmp"); })) return;
        if (f.file_size != bytes.size()) violated("hsmp", "the sampler's file size is not the input's");
        const std::vector<double> values = probe(f.sampler);
        const auto written = scratch_dir() / "written.hsmp";
        write_sampler_file(written, f.metadata, f.sampler);
        const std::string first = read_file(written);
        const SamplerFile again = must_read("hsmp", [&] { return map_sampler_file(written); });
        if (!same_bits(probe(again.sampler), values)) violated("hsmp", "the sampler written and read again gives other values");
        write_sampler_file(written, again.metadata, again.sampler);
        if (read_file(written) != first) violated("hsmp", "write, read, write gives other bytes");
    });
}

}  // namespace hp::fuzz
