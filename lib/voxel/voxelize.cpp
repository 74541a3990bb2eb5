// The voxelizer's driver: checks the options, runs the phases (surface.cpp, fill.cpp with
// crossings.cpp, layers.cpp) on the working grid of work.hpp, and converts the result slice by
// slice into signed int16 layers. Method: docs/voxelize.md.
#include "voxel/voxelize.hpp"

#include <algorithm>

#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "voxel/work.hpp"

namespace hp {

const std::vector<FillMethodName>& fill_methods() {
    static const std::vector<FillMethodName> all = {{"auto", FillMethod::automatic}, {"scanline", FillMethod::scanline},
                                                    {"vote", FillMethod::vote},      {"winding", FillMethod::winding},
                                                    {"flood", FillMethod::flood},    {"hybrid", FillMethod::hybrid}};
    return all;
}

const char* fill_name(FillMethod m) {
    for (const FillMethodName& f : fill_methods())
        if (f.method == m) return f.name;
    return "?";
}

FillMethod parse_fill(const std::string& name) {
    for (const FillMethodName& f : fill_methods())
        if (name == f.name) return f.method;
    fail_usage("unknown fill method '" + name + "'");
}

std::vector<std::int32_t> LayerMap::values() const {
    std::vector<std::int32_t> v;
    v.reserve(grid.count());
    for (const auto& slice : slices) v.insert(v.end(), slice.begin(), slice.end());
    return v;
}

LayerMap voxelize(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, const Progress& progress) {
    using namespace voxel_detail;
    for (int a = 0; a < 3; ++a)
        if (grid.dims[a] < 1 || grid.dims[a] > kMaxGridDim)
            fail_usage("the grid has " + std::to_string(grid.dims[a]) + " voxels along an axis; at most " +
                       std::to_string(kMaxGridDim) + " are supported");
    if (options.connectivity != 26 && options.connectivity != 6) fail_usage("--connectivity must be 26 or 6");
    if (options.max_layers < 0) fail_usage("--max-layers must be >= 0 (0 = unlimited)");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");

    auto t0 = Clock::now();
    Work w;
    w.grid = grid;
    w.nx = static_cast<std::size_t>(grid.dims[0]);
    w.ny = static_cast<std::size_t>(grid.dims[1]);
    w.nz = static_cast<std::size_t>(grid.dims[2]);
    w.slice = w.nx * w.ny;
    // The working cells are the output's slices, read and written as uint16 until the layers are
    // converted in place below: each slice's pages are touched by one buffer only.
    LayerMap out;
    out.grid = grid;
    out.slices.resize(w.nz);
    w.cells.resize(w.nz);
    tbb::parallel_for(std::size_t{0}, w.nz, [&](std::size_t k) {
        out.slices[k].assign(w.slice, static_cast<std::int16_t>(kUnknown));
        w.cells[k] = std::span<std::uint16_t>(reinterpret_cast<std::uint16_t*>(out.slices[k].data()), w.slice);
    });
    out.seconds_prepare = seconds_since(t0);
    t0 = Clock::now();
    mark_surface(mesh, w, progress);
    out.seconds_surface = seconds_since(t0);

    t0 = Clock::now();
    FillMethod method = options.fill;
    if (method == FillMethod::automatic) {
        MeshDiagnostics d = diagnose(mesh);
        method = d.watertight ? FillMethod::scanline : FillMethod::hybrid;
    }
    out.fill_used = method;
    switch (method) {
    case FillMethod::scanline: fill_scanline(mesh, w, progress); break;
    case FillMethod::vote: out.undecided = fill_vote(mesh, w, progress, out.by_winding); break;
    case FillMethod::winding: fill_winding(mesh, w, progress); break;
    case FillMethod::flood: fill_flood(w, progress); break;
    case FillMethod::hybrid: {
        const HybridCounts n = fill_hybrid(mesh, w, progress);
        out.by_vote = n.by_vote, out.by_winding = n.by_winding, out.winding_evaluated = n.evaluated;
        break;
    }
    case FillMethod::automatic: break;
    }
    out.seconds_fill = seconds_since(t0);

    t0 = Clock::now();
    out.layer_sweeps = compute_layers(w, options.connectivity, progress, out.flipped);
    // Signed layer values, one slice at a time, each cell read as uint16 and its layer written as
    // int16 in its place.
    int lo = 0, hi = 0;
    for (std::size_t k = 0; k < w.nz; ++k) {
        std::int16_t* s = out.slices[k].data();
        const std::uint16_t* c = w.cells[k].data();
        for (std::size_t o = 0; o < w.slice; ++o) {
            int d = dist(c[o]);
            if (options.max_layers > 0) d = std::min(d, options.max_layers);
            int v = c[o] & 1 ? d : -d;
            s[o] = static_cast<std::int16_t>(v);
            if (v > 0) ++out.inside;
            else if (v < 0) ++out.outside;
            else ++out.surface;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    w.cells.clear();
    out.min_layer = lo;
    out.max_layer = hi;
    out.seconds_layers = seconds_since(t0);
    return out;
}

}  // namespace hp
