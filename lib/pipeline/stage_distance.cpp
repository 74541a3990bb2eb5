// The distance stage: its declaration (options bound to DistanceParams), its body (shared with
// haptic-distance, which adds its files) and its summary (to_json, format_text).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <span>

#include <malloc.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "distance/distance.hpp"
#include "formats/sampler.hpp"
#include "formats/vdb.hpp"
#include "pipeline/memory_model.hpp"
#include "query/static_field.hpp"
#include "voxel/brick.hpp"
#include "pipeline/stage_distance.hpp"

namespace hp::pipeline {

StageSpec distance_stage() {
    StageSpec s;
    s.name = "distance";
    s.tool = "haptic-distance";
    s.description = "signed distance field (inside positive) over the voxelmap";
    s.output_name = "distance.vdb";
    s.produces = "distance";
    s.needs = {"voxelmap"};
    s.available = true;
    Declare<DistanceParams> d(s.params);
    const std::string scaled = vdb::distance_encoding_name(vdb::DistanceEncoding::scaled);
    d(&DistanceParams::encoding, "encoding", or_list(vdb::kDistanceEncodingNames))
        .one_of(std::vector<nlohmann::json>(vdb::kDistanceEncodingNames.begin(), vdb::kDistanceEncodingNames.end()));
    d(&DistanceParams::precision, "precision", "decimal digits P of the " + scaled + " encoding").in(0, 12).only_with("encoding", {scaled});
    d(&DistanceParams::gradient, "gradient", "also write a Vec3f 'gradient' grid");
    d(&DistanceParams::band, "band",
      "narrow band of B voxels (exact within B, +-B voxel sizes beyond, as tiles); 0 = dense; default: the voxelmap's")
        .in(0, 16383);
    d(&DistanceParams::exact_layers, "exact_layers",
      "dense field: exact distances wherever |layer| <= N, propagated beyond (default 3, 9 for 6-connected voxelmaps)")
        .in(1, 16383);
    d(&DistanceParams::force, "force", "proceed even if the mesh is not the one the voxelmap was made from");
    declare_mesh_options(d, " (default: the voxelmap's)");
    s.run = typed_run("distance", &run_distance);
    return s;
}

nlohmann::json to_json(const DistanceSummary& s) {
    nlohmann::json j = {{"encoding", s.encoding},
            {"precision", s.precision},
            {"grid", {{"dims", s.grid.dims}, {"voxel_size", s.grid.voxel_size}}},
            {"range", {s.min, s.max}},
            {"exact_voxels", s.exact_voxels},
            {"propagation_passes", s.propagation_passes},
            {"seconds", {{"import", s.seconds_import}, {"read", s.seconds_read}, {"prepare", s.seconds_prepare},
                         {"exact", s.seconds_exact}, {"propagate", s.seconds_propagate}, {"sign", s.seconds_sign},
                         {"gradient", s.seconds_gradient}, {"write", s.seconds_write}}},
            {"warnings", s.warnings}};
    if (s.seconds_sampler > 0) j["seconds"]["sampler"] = s.seconds_sampler;
    if (s.band > 0) j["band"] = s.band;
    else j["exact_layers"] = s.exact_layers;
    return j;
}

nlohmann::json to_json(const DistanceSummary& s, const ToolFacts& f) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["mesh"] = to_json(f.mesh->diagnostics);
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const DistanceSummary& s, const ToolFacts& f) {
    std::string out = strf("grid         %d x %d x %d voxels, voxel size %.6g\n", s.grid.dims[0], s.grid.dims[1],
                           s.grid.dims[2], s.grid.voxel_size);
    out += strf("distance     %.6g .. %.6g (inside positive), encoding %s\n", s.min, s.max, s.encoding.c_str());
    if (s.band > 0)
        out += strf("exact        %s voxels within %d voxels of the surface (narrow band; +-%d voxel sizes beyond)\n",
                    with_commas(s.exact_voxels).c_str(), s.band, s.band);
    else
        out += strf("exact        %s voxels, |layer| <= %d\n", with_commas(s.exact_voxels).c_str(), s.exact_layers);
    out += strf("time         import %.3f s, read %.3f s, prepare %.3f s, exact %.3f s, propagate %.3f s, sign %.3f s, "
                "gradient %.3f s, write %.3f s, total %.3f s\n", s.seconds_import, s.seconds_read, s.seconds_prepare,
                s.seconds_exact, s.seconds_propagate, s.seconds_sign, s.seconds_gradient, s.seconds_write, f.total_seconds);
    out += strf("memory       peak %s\n", human_bytes(static_cast<double>(f.peak_rss_bytes)).c_str());
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

namespace {

// The stage's --encoding (one of its declared choices).
vdb::DistanceEncoding encoding_of(const DistanceParams& p) {
    const std::optional<vdb::DistanceEncoding> e = vdb::parse_distance_encoding(p.encoding);
    if (!e) fail_usage("unknown encoding '" + p.encoding + "' (use " + or_list(vdb::kDistanceEncodingNames) + ")");
    return *e;
}

// Refuses (exit 2) a precision whose scaled distances up to max(-lo, hi) overflow Int32.
void check_scaled_fits(const StageContext& ctx, vdb::DistanceEncoding encoding, int precision, double lo, double hi) {
    const double reach = std::max(-lo, hi);
    if (encoding == vdb::DistanceEncoding::scaled && reach * std::pow(10.0, precision) > 2147483647.0)
        fail_usage(ctx.option_name("precision") + " " + std::to_string(precision) + " overflows Int32 for distances up to " +
                   std::to_string(reach) + "; use at most " +
                   std::to_string(static_cast<int>(std::floor(std::log10(2147483647.0 / reach)))));
}

// The field's metadata: the voxelmap's provenance (source, fill...) and what this stage made.
nlohmann::json distance_metadata(const nlohmann::json& voxelmap_meta, const std::filesystem::path& map_path,
                                 vdb::DistanceEncoding encoding, int precision, const std::string& method,
                                 const nlohmann::json& parameters) {
    nlohmann::json meta = voxelmap_meta;
    meta["kind"] = "distance";
    meta["tool"] = "haptic-distance";
    meta["tool_version"] = kVersion;
    meta["encoding"] = vdb::distance_encoding_name(encoding);
    meta["precision"] = encoding == vdb::DistanceEncoding::scaled ? precision : -1;
    meta["scale_factor"] = encoding == vdb::DistanceEncoding::scaled ? std::pow(10.0, precision) : 1.0;
    meta["voxelmap"] = map_path.filename().string();
    meta["method"] = method;
    meta["distance_parameters"] = parameters.dump();
    meta.erase("grid");
    meta.erase("format_version");
    return meta;
}

// Writes the grids and returns the summary's facts common to dense and band fields.
DistanceSummary write_field(const StageContext& ctx, const GridSpec& g, const std::vector<vdb::GridOut>& grids,
                            const nlohmann::json& meta, vdb::DistanceEncoding encoding, int precision, double lo, double hi) {
    const auto t_write = std::chrono::steady_clock::now();
    vdb::write(ctx.output, g, grids, meta, std::string("hapticprep ") + kVersion);
    DistanceSummary r;
    r.seconds_write = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();
    r.encoding = vdb::distance_encoding_name(encoding);
    r.precision = encoding == vdb::DistanceEncoding::scaled ? precision : -1;
    r.grid = {g.dims, g.voxel_size};
    r.min = lo, r.max = hi;
    return r;
}

// The voxelmap's layers over its grid (x fastest): int16 while every value fits (those of
// haptic-voxelize always do), else int32. Written once, slice by slice as read.
struct DenseLayers {
    MappedPages pages;
    bool wide = false;  // int32
    const std::int16_t* l16() const { return wide ? nullptr : pages.as<std::int16_t>(); }
    const std::int32_t* l32() const { return wide ? pages.as<std::int32_t>() : nullptr; }
};

DenseLayers read_dense_layers(const vdb::Reader& reader) {
    const GridSpec& g = reader.info().grid;
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]), n = g.count();
    DenseLayers out;
    out.pages = MappedPages(n * sizeof(std::int16_t));
    reader.read_slices("layers", vdb::ValueType::int32, [&](int z, const void* values) {
        const auto* v = static_cast<const std::int32_t*>(values);
        const std::size_t at = static_cast<std::size_t>(z) * slice;
        if (!out.wide) {
            std::int16_t* d = out.pages.as<std::int16_t>() + at;
            bool fits = true;
            for (std::size_t i = 0; i < slice; ++i) {
                d[i] = static_cast<std::int16_t>(v[i]);
                fits &= v[i] >= INT16_MIN && v[i] <= INT16_MAX;
            }
            if (fits) return;
            MappedPages wide(n * sizeof(std::int32_t));
            std::copy(out.pages.as<std::int16_t>(), out.pages.as<std::int16_t>() + at, wide.as<std::int32_t>());
            out.pages = std::move(wide);
            out.wide = true;
        }
        std::copy(v, v + slice, out.pages.as<std::int32_t>() + at);
    });
    return out;
}

// The cells of the dense field (DenseCells: each voxel's layer class for the exact band `band`),
// written once, slice by slice as the layers are read: the layers themselves are not kept.
DenseCells read_dense_cells(const vdb::Reader& reader, int band) {
    const GridSpec& g = reader.info().grid;
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    DenseCells cells(g.count());
    reader.read_slices("layers", vdb::ValueType::int32, [&](int z, const void* values) {
        const auto* v = static_cast<const std::int32_t*>(values);
        std::uint32_t* c = cells.data() + static_cast<std::size_t>(z) * slice;
        for (std::size_t i = 0; i < slice; ++i) c[i] = DenseCells::of(v[i], band);
    });
    return cells;
}

// The field's prepared sampler beside the file just written (its name with .hsmp), from the
// values in memory: the sampler haptic-pipeline would build from the file (the same bytes),
// without reading it back, made while it is written (write_dense_sampler_file).
template <class V>
void write_sampler_beside(const StageContext& ctx, vdb::DistanceEncoding encoding, const GridSpec& grid, std::span<const V> values) {
    StaticField field;  // its record only: the sampler is not built
    field.kind = "distance";
    field.encoding = vdb::distance_encoding_name(encoding);
    field.metadata = vdb::Reader::open(ctx.output).info().metadata;  // as a reader of the file sees it
    std::filesystem::path path = ctx.output;
    write_dense_sampler_file(path.replace_extension(kSamplerExtension),
                             static_sampler_metadata(ctx.output.filename().string(), std::filesystem::file_size(ctx.output),
                                                     content_hash(ctx.output), field),
                             grid, values);
}

// The narrow-band body of run_distance: layers read as bricks, exact distances within the band,
// +-band voxel sizes beyond, written block by block (tiles beyond the band).
DistanceSummary run_distance_band(const StageContext& ctx, const DistanceParams& p, const vdb::Reader& reader,
                                  const LoadedMesh& m, int band, std::vector<std::string> warnings) {
    const std::filesystem::path map_path = ctx.inputs->at("voxelmap");
    const vdb::FileInfo& info = reader.info();
    const vdb::DistanceEncoding encoding = encoding_of(p);
    const int precision = p.precision;
    // Layers as int16 bricks, clamped to +-band (beyond the band they read as +-band in the output,
    // as in a voxelmap made with this band).
    bool clamped = false;
    auto t0 = std::chrono::steady_clock::now();
    BrickField<std::int16_t> layers = reader.read_int16_bricks("layers", band, &clamped);
    // The reader gave its leaves back as it went; its internal nodes were freed with its tree:
    // give them back to the system too, the distance values are mapped apart and cannot reuse them.
    ::malloc_trim(0);
    const double read_s = seconds_since(t0);
    // The float encoding stores floats: compute them as such (each the double result rounded).
    t0 = std::chrono::steady_clock::now();
    BandDistanceFieldOf<float> field32;
    BandDistanceFieldOf<double> field64;
    // Without gradients the layers are not needed after the distances (the write copies the
    // voxelmap's stored grid, or reads the layers again where it clamps them): the distances
    // consume them, so that the two are never both whole in memory.
    auto distances = [&](auto value) {
        using V = decltype(value);
        if (p.gradient) return compute_distance_band_as<V>(m.mesh, layers, band, ctx.progress);
        return compute_distance_band_as<V>(m.mesh, std::move(layers), band, ctx.progress);
    };
    if (encoding == vdb::DistanceEncoding::float32) field32 = distances(0.0f);
    else field64 = distances(0.0);
    const double exact_s = seconds_since(t0);
    const double lo = encoding == vdb::DistanceEncoding::float32 ? field32.min : field64.min, hi = encoding == vdb::DistanceEncoding::float32 ? field32.max : field64.max;
    const double factor = std::pow(10.0, precision);
    check_scaled_fits(ctx, encoding, precision, lo, hi);
    // Gradients on the band voxels (zero beyond), the dense field's values there.
    t0 = std::chrono::steady_clock::now();
    BandGradientField grad;
    if (p.gradient) grad = compute_gradient_band(m.mesh, layers, band, ctx.progress);
    const double gradient_s = seconds_since(t0);

    nlohmann::json meta = distance_metadata(
        info.metadata, map_path, encoding, precision,
        "exact BVH closest points within the narrow band of " + std::to_string(band) + " voxels; +-band voxel sizes beyond",
        {{"encoding", vdb::distance_encoding_name(encoding)}, {"precision", precision}, {"gradient", p.gradient}, {"band", band}});
    meta["band"] = band;

    const GridSpec& g = info.grid;
    std::vector<double> dbrick(kBrickVoxels);
    std::vector<std::int32_t> ibrick(kBrickVoxels), lbrick(kBrickVoxels);
    BrickField<double>& f = field64.values;
    auto block_source = [&f](auto convert, auto& buffer) {
        return [&f, convert, &buffer](std::size_t b, void* tile) -> const void* {
            using W = typename std::decay_t<decltype(buffer)>::value_type;
            const double* src = f.brick(b);
            if (src && f.index[b] % 256 == 0) f.release_bricks_before(f.index[b]);  // copied by the writer already
            if (!src) {
                *static_cast<W*>(tile) = convert(f.tile[b]);
                return nullptr;
            }
            for (int o = 0; o < kBrickVoxels; ++o) buffer[static_cast<std::size_t>(o)] = convert(src[o]);
            return buffer.data();
        };
    };
    vdb::GridOut dist{"distance", vdb::ValueType::float32, nullptr, lo - g.voxel_size};
    if (encoding == vdb::DistanceEncoding::float32) {
        dist.blocks = [&field32](std::size_t b, void* tile) -> const void* {
            auto& v = field32.values;
            const float* src = v.brick(b);
            if (!src) *static_cast<float*>(tile) = v.tile[b];
            else if (v.index[b] % 256 == 0) v.release_bricks_before(v.index[b]);  // copied by the writer already
            return src;
        };
    } else if (encoding == vdb::DistanceEncoding::float64) {
        dist.type = vdb::ValueType::float64;
        dist.blocks = block_source([](double v) { return v; }, dbrick);
    } else {
        dist.type = vdb::ValueType::int32;
        dist.background = std::round((lo - g.voxel_size) * factor);
        dist.blocks = block_source([factor](double v) { return static_cast<std::int32_t>(std::llround(v * factor)); }, ibrick);
    }
    vdb::GridOut lay{"layers", vdb::ValueType::int32, nullptr, -1.0};
    lay.blocks = [&](std::size_t b, void* tile) -> const void* {
        // vdb::write builds the grids in order: the distances are in their tree by now.
        if (b == 0) field32.values = {}, field64.values = {};
        // Consumed by the distances, or freed for the stored copy below: read again when the
        // writer builds the layers from their blocks after all.
        if (b == 0 && layers.index.empty()) layers = reader.read_int16_bricks("layers", band);
        const std::int16_t* src = layers.brick(b);
        if (!src) {
            *static_cast<std::int32_t*>(tile) = layers.tile[b];
            return nullptr;
        }
        if (layers.index[b] % 256 == 0) layers.release_bricks_before(layers.index[b]);  // in the tree already
        std::copy(src, src + kBrickVoxels, lbrick.begin());
        return lbrick.data();
    };
    // Layers within the band already (a voxelmap made with this band): the field's layers grid is
    // the voxelmap's, whose stored bytes the writer copies instead of compressing them again.
    if (!clamped)
        if (auto stored = reader.stored_grid("layers")) {
            lay.stored = stored;
            lay.background = vdb::stored_background(*stored);  // the voxelmap's (its layers below the band's)
        }
    // The writer copies the stored grid: the bricks of the layers are not needed any more.
    if (lay.stored) layers = {};
    std::vector<vdb::GridOut> grids{dist, lay};
    if (p.gradient) {
        vdb::GridOut gr{"gradient", vdb::ValueType::vec3f, nullptr, 0.0};
        gr.blocks = [&grad](std::size_t b, void* tile) -> const void* {
            auto& v = grad.values;
            const Vec3f* src = v.brick(b);
            if (!src) std::copy_n(v.tile[b].data(), 3, static_cast<float*>(tile));
            else if (v.index[b] % 256 == 0) v.release_bricks_before(v.index[b]);  // copied by the writer already
            return src;
        };
        grids.push_back(std::move(gr));
    }
    DistanceSummary r = write_field(ctx, g, grids, meta, encoding, precision, lo, hi);
    r.exact_voxels = encoding == vdb::DistanceEncoding::float32 ? field32.exact_voxels : field64.exact_voxels;
    r.band = band;
    r.seconds_read = read_s, r.seconds_exact = exact_s, r.seconds_gradient = gradient_s;
    r.warnings = std::move(warnings);
    return r;
}

// The band and the exact layers of the run, from the stage's options and the voxelmap's metadata;
// a combination the voxelmap cannot give is refused (usage error).
struct FieldShape {
    int band = 0;
    int connectivity = 26;
    int exact_layers = 0;
};
FieldShape field_shape(const StageContext& ctx, const DistanceParams& p, const vdb::FileInfo& info,
                       const std::filesystem::path& map_path) {
    const int map_band = static_cast<int>(info.metadata.value("band", std::int64_t{0}));
    const int band = p.band ? *p.band : map_band;
    const int map_clamp = static_cast<int>(info.metadata.value("max_layers", std::int64_t{0}));
    if (map_band > 0 && band == 0)
        fail_usage(map_path.string() + " is a narrow-band voxelmap (band " + std::to_string(map_band) + "); a dense field needs a " +
                   "dense voxelmap (haptic-voxelize --band 0)");
    if (band > 0 && map_band > 0 && band > map_band)
        fail_usage(ctx.option_name("band") + " " + std::to_string(band) + " is wider than the voxelmap's band of " +
                   std::to_string(map_band) + " voxels; use at most " + std::to_string(map_band) + " or voxelize with a wider band");
    if (band > 0 && map_band == 0 && map_clamp > 0 && band > map_clamp)
        fail_usage(ctx.option_name("band") + " " + std::to_string(band) + " is wider than the voxelmap's layers (clamped to " +
                   std::to_string(map_clamp) + "); use at most " + std::to_string(map_clamp));
    const int connectivity = static_cast<int>(info.metadata.value("connectivity", std::int64_t{26}));
    const int exact_layers = p.exact_layers ? *p.exact_layers : default_exact_layers(connectivity);
    if (p.exact_layers && band > 0)
        fail_usage(ctx.option_name("exact_layers") + " is for dense fields; a band field is exact within its band (" +
                   ctx.option_name("band") + ")");
    if (exact_layers < default_exact_layers(connectivity))
        fail_usage(ctx.option_name("exact_layers") + " " + std::to_string(exact_layers) + " is below the " +
                   std::to_string(default_exact_layers(connectivity)) + " layers the propagation beyond needs for a " +
                   std::to_string(connectivity) + "-connected voxelmap; use at least " +
                   std::to_string(default_exact_layers(connectivity)));
    if (map_clamp > 0 && exact_layers >= map_clamp)
        fail_usage(ctx.option_name("exact_layers") + " " + std::to_string(exact_layers) + " reaches the voxelmap's layers (clamped to " +
                   std::to_string(map_clamp) + "); use at most " + std::to_string(map_clamp - 1) +
                   " or voxelize with a larger --max-layers");
    return {band, connectivity, exact_layers};
}

// The dense body of run_distance: the layers read into the cells, exact distances within
// `exact_layers`, propagated beyond, written slice by slice (and the prepared sampler beside).
DistanceSummary run_distance_dense(const StageContext& ctx, const DistanceParams& p, const vdb::Reader& reader,
                                   const LoadedMesh& m, const FieldShape& shape, std::vector<std::string> warnings) {
    const std::filesystem::path map_path = ctx.inputs->at("voxelmap");
    const vdb::FileInfo& info = reader.info();
    const vdb::DistanceEncoding encoding = encoding_of(p);
    const int precision = p.precision;
    const bool gradient = p.gradient;
    const int connectivity = shape.connectivity, exact_layers = shape.exact_layers;
    DistanceOptions dopt;
    dopt.connectivity = connectivity;
    dopt.exact_layers = exact_layers;
    dopt.gradient = gradient;
    auto t0 = std::chrono::steady_clock::now();
    DenseCells cells = read_dense_cells(reader, dense_exact_band(dopt));
    // The reader's tree was thousands of small leaf allocations, freed now: give them back to the
    // system (the arrays below are mapped apart and cannot reuse them).
    ::malloc_trim(0);
    const double read_s = seconds_since(t0);
    // The gradients, written once each by the sign phase.
    const GridSpec& g = info.grid;
    const std::size_t n = g.count();
    MappedPages grad(gradient ? 3 * n * sizeof(float) : 0);
    // The float encoding's values as floats, the others' as doubles.
    DenseDistance<float> f32;
    DenseDistance<double> f64;
    if (encoding == vdb::DistanceEncoding::float32)
        f32 = compute_distance_as<float>(m.mesh, g, std::move(cells), grad.as<float>(), dopt, ctx.progress);
    else
        f64 = compute_distance_as<double>(m.mesh, g, std::move(cells), grad.as<float>(), dopt, ctx.progress);
    const DistanceRun& field = encoding == vdb::DistanceEncoding::float32 ? static_cast<const DistanceRun&>(f32) : f64;
    const double lo = field.min, hi = field.max;
    const double factor = std::pow(10.0, precision);
    check_scaled_fits(ctx, encoding, precision, lo, hi);
    nlohmann::json parameters{{"encoding", vdb::distance_encoding_name(encoding)}, {"precision", precision}, {"gradient", gradient}};
    if (p.exact_layers) parameters["exact_layers"] = exact_layers;  // (files made with the default stay as they were)
    const nlohmann::json meta = distance_metadata(
        info.metadata, map_path, encoding, precision,
        "exact BVH closest points within " + std::to_string(exact_layers) + " voxels of the surface; closest-feature propagation beyond",
        parameters);

    // Each array is freed once the writer has its last slice, but the distances when the sampler
    // is made from them afterwards (scaled distances: from the file, as they read back rounded).
    const bool sampler = ctx.prepared_sampler && encoding != vdb::DistanceEncoding::scaled;
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    const int last = g.dims[2] - 1;
    std::vector<vdb::GridOut> grids;
    auto at = [&](int z) { return static_cast<std::size_t>(z) * slice; };
    if (encoding == vdb::DistanceEncoding::float32)
        grids.push_back({"distance", vdb::ValueType::float32, [&](int z, void* out) {
                             std::copy_n(f32.values() + at(z), slice, static_cast<float*>(out));
                             if (z == last && !sampler) f32.pages.reset();
                         }, lo - g.voxel_size});
    else if (encoding == vdb::DistanceEncoding::float64)
        grids.push_back({"distance", vdb::ValueType::float64, [&](int z, void* out) {
                             std::copy_n(f64.values() + at(z), slice, static_cast<double*>(out));
                             if (z == last && !sampler) f64.pages.reset();
                         }, lo - g.voxel_size});
    else
        grids.push_back({"distance", vdb::ValueType::int32, [&](int z, void* out) {
                             auto* d = static_cast<std::int32_t*>(out);
                             for (std::size_t i = 0; i < slice; ++i)
                                 d[i] = static_cast<std::int32_t>(std::llround(f64.values()[at(z) + i] * factor));
                             if (z == last) f64.pages.reset();
                         }, std::round((lo - g.voxel_size) * factor)});
    // Only where the writer cannot copy the voxelmap's stored grid (below): the layers read again.
    DenseLayers layers;
    vdb::GridOut lay{"layers", vdb::ValueType::int32, [&](int z, void* out) {
                         if (z == 0) layers = read_dense_layers(reader);
                         if (layers.wide) std::copy_n(layers.l32() + at(z), slice, static_cast<std::int32_t*>(out));
                         else std::copy_n(layers.l16() + at(z), slice, static_cast<std::int32_t*>(out));
                         if (z == last) layers.pages.reset();
                     }, -1.0};
    // The field's layers grid is the voxelmap's (read whole, never clamped here): the writer copies
    // its stored bytes instead of building and compressing the same tree again (it falls back to
    // the slices when the stored grid is of another type, transform or compression).
    if (auto stored = reader.stored_grid("layers")) {
        lay.stored = stored;
        lay.background = vdb::stored_background(*stored);
    }
    grids.push_back(lay);
    if (gradient)
        grids.push_back({"gradient", vdb::ValueType::vec3f, [&](int z, void* out) {
                             std::copy_n(grad.as<float>() + 3 * at(z), 3 * slice, static_cast<float*>(out));
                             if (z == last) grad.reset();
                         }, 0.0});
    DistanceSummary r = write_field(ctx, g, grids, meta, encoding, precision, lo, hi);
    if (sampler) {
        t0 = std::chrono::steady_clock::now();
        if (encoding == vdb::DistanceEncoding::float32) write_sampler_beside(ctx, encoding, g, std::span<const float>(f32.values(), n));
        else write_sampler_beside(ctx, encoding, g, std::span<const double>(f64.values(), n));
        r.seconds_sampler = seconds_since(t0);
    }
    r.exact_voxels = field.exact_voxels;
    r.exact_layers = exact_layers;
    r.propagation_passes = field.propagation_passes;
    r.seconds_read = read_s, r.seconds_prepare = field.seconds_prepare;
    r.seconds_exact = field.seconds_exact, r.seconds_propagate = field.seconds_propagate;
    r.seconds_sign = field.seconds_sign;
    r.warnings = std::move(warnings);
    return r;
}


}  // namespace

DistanceSummary run_distance(const StageContext& ctx, const DistanceParams& p) {
    const std::filesystem::path map_path = ctx.inputs->at("voxelmap");
    const bool force = p.force;

    auto t0 = std::chrono::steady_clock::now();
    const vdb::Reader reader = vdb::Reader::open(map_path);
    double read_s = seconds_since(t0);
    const vdb::FileInfo& info = reader.info();
    if (info.metadata.value("kind", "") != "voxelmap")
        fail_input(map_path.string(), "is not a voxelmap of haptic-voxelize (kind '" + info.metadata.value("kind", "?") + "')");
    // The mesh is read with the voxelmap's units/scale unless the stage gives others.
    nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
    if (params.is_discarded()) params = nlohmann::json::object();
    MeshLoadOptions mopt;
    mopt.units = p.units ? *p.units : params.value("units", "");
    mopt.scale = p.scale ? *p.scale : params.value("scale", 1.0);
    mopt.part = part_or(p.part, params);
    tessellation_or(mopt, p, params);
    t0 = std::chrono::steady_clock::now();
    const LoadedMesh& m = ctx.load_mesh(mopt);
    const double import_s = seconds_since(t0);
    std::vector<std::string> warnings;
    add_import_notes(warnings, ctx.mesh.string(), m);
    const std::string mismatch = check_source_hash(ctx.mesh.string(), m.source_hash, map_path.string(), "voxelmap",
                                                   info.metadata.value("source_hash", ""), force, ctx.option_name("force"));
    if (!mismatch.empty()) warnings.push_back(mismatch);
    const FieldShape shape = field_shape(ctx, p, info, map_path);
    {  // Refused before any work when the field (with its gradient) would not fit in memory.
        const GridSpec& g = info.grid;
        const int pad = std::clamp(static_cast<int>(info.metadata.value("padding", std::int64_t{0})), 0,
                                   std::min({g.dims[0], g.dims[1], g.dims[2]}) / 2);
        const Aabb inner{g.corner(pad, pad, pad), g.corner(g.dims[0] - pad, g.dims[1] - pad, g.dims[2] - pad)};
        check_distance_fits(inner, mesh_area(m.mesh), g.voxel_size, pad, shape.band, p.gradient, physical_memory(),
                            ctx.option_name("band"), ctx.option_name("gradient"));
    }
    DistanceSummary r = shape.band > 0 ? run_distance_band(ctx, p, reader, m, shape.band, std::move(warnings))
                                       : run_distance_dense(ctx, p, reader, m, shape, std::move(warnings));
    r.seconds_import = import_s, r.seconds_read += read_s;
    return r;
}

}  // namespace hp::pipeline
