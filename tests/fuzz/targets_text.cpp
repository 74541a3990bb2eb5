// Fuzz entries of the JSON files the tools read: the pipeline (with --set overrides), the manifest
// (haptic-pipeline --resume and --merge), the poses file (haptic-query --poses) and scene.json.
// A successful read is written back (the tools' own writers, or the form the tool records) and
// read again: both reads must agree.
#include <sstream>

#include "fuzz_targets.hpp"
#include "pipeline/manifest.hpp"
#include "pipeline/pipeline.hpp"
#include "query/scenario.hpp"
#include "scene/scene_file.hpp"

namespace hp::fuzz {

namespace {

std::string_view as_view(const std::uint8_t* data, std::size_t size) {
    return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace

// The input: any number of lines "--set stage.key=value" (as haptic-pipeline takes them), then the
// pipeline file's text.
void pipeline(const std::uint8_t* data, std::size_t size) {
    std::string_view text = as_view(data, size);
    std::vector<pipeline::Override> overrides;
    constexpr std::string_view kSet = "--set ";
    while (text.substr(0, kSet.size()) == kSet) {
        const std::size_t eol = text.find('\n');
        const std::string_view line = text.substr(kSet.size(), eol == std::string_view::npos ? eol : eol - kSet.size());
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        if (!refused_or_ran([&] { overrides.push_back(pipeline::parse_override(line)); })) return;
    }
    const auto path = scratch_file("pipeline.json", text);
    pipeline::Pipeline p;
    if (!refused_or_ran([&] { p = pipeline::load_pipeline(path, overrides); })) return;
    // The pipeline as run (what the manifest records) is itself a valid pipeline file.
    const nlohmann::json as_run = p.to_json();
    const auto written = scratch_file("as-run.json", as_run.dump(2));
    const pipeline::Pipeline again = must_read("pipeline", [&] { return pipeline::load_pipeline(written); });
    if (again.to_json() != as_run) violated("pipeline", "the pipeline as run reads back differently");
    if (again.params_hash() != p.params_hash()) violated("pipeline", "the pipeline as run has another params_hash");
}

void manifest(const std::uint8_t* data, std::size_t size) {
    const auto path = scratch_file("manifest.json", as_view(data, size));
    pipeline::Manifest m;
    if (!refused_or_ran([&] { m = pipeline::read_manifest(path); })) return;
    const auto written = scratch_dir() / "manifest-written.json";
    pipeline::write_manifest(written, m);
    const pipeline::Manifest again = must_read("manifest", [&] { return pipeline::read_manifest(written); });
    if (nlohmann::json(again) != nlohmann::json(m)) violated("manifest", "write, read gives another manifest");
}

void poses(const std::uint8_t* data, std::size_t size) {
    const auto path = scratch_file("poses.json", as_view(data, size));
    std::vector<Pose> p;
    if (!refused_or_ran([&] { p = read_poses(path); })) return;
    const auto written = scratch_dir() / "poses-written.json";
    write_poses(written, p);
    const std::vector<Pose> again = must_read("poses", [&] { return read_poses(written); });
    if (poses_to_json(again) != poses_to_json(p)) violated("poses", "write, read gives other poses");
}

void scene(const std::uint8_t* data, std::size_t size) {
    const auto path = scratch_file("scene.json", as_view(data, size));
    scene::Scene s;
    if (!refused_or_ran([&] { s = scene::read_scene(path); })) return;
    const auto written = scratch_dir() / "scene-written.json";
    scene::write_scene(written, s);
    const scene::Scene again = must_read("scene", [&] { return scene::read_scene(written); });
    if (scene::to_json(again) != scene::to_json(s)) violated("scene", "write, read gives another scene");
}

}  // namespace hp::fuzz
