#pragma once
// lib/pipeline — the stages of a haptic pipeline, run in-process (docs/pipeline.md).
//
// A stage is one executable of the toolchain seen from the library: its name ("voxelize"), the
// executable it mirrors ("haptic-voxelize"), the options it declares, the kinds of files it needs
// and makes, and a run function that calls the library (never the executable) and writes its
// output file atomically.
//
// Each option is declared once (stage_*.cpp, with Declare below): key, type, default, range or
// choices, help, excludes, bound to a field of the stage's typed options struct (stage_<name>.hpp).
// The executables make their command-line options from the declaration (apps/common/stage_call.hpp),
// a pipeline validates its JSON against it, and the checks between options (StageSpec::check)
// serve both. The JSON key is the long option without dashes ("--voxel-size" -> "voxel_size").
// What an executable has besides the declared options (its files, output paths, --json...) is
// listed in StageSpec::executable_only.
//
// Stages pass files, not memory: a stage reads the files of earlier stages (the same bytes the
// executables would read), so that a pipeline's artifacts are byte-identical to those of the
// executables run one after the other with the same options, and --resume can trust the files.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory.hpp"
#include "core/progress.hpp"
#include "mesh/mesh.hpp"

namespace hp::pipeline {

enum class ParamType { integer, number, string, flag };
const char* type_name(ParamType t);

struct ParamSpec {
    std::string key;                     // JSON key: "voxel_size"
    std::string option;                  // the executable's option: "--voxel-size"
    ParamType type = ParamType::number;
    nlohmann::json default_value;        // null: unset (see help)
    std::string help;
    std::vector<nlohmann::json> choices;  // allowed values; empty: any of the type
    std::optional<double> min, max;       // inclusive range for integer/number
    bool positive = false;                // number > 0
    std::vector<std::string> excludes;    // keys that may not be given together with this one
    // Non-empty: the option names an input file of this kind. The executable takes the file
    // (--cfm FILE); in a pipeline the key is a flag: true = use the file an earlier stage made.
    std::string input;
    // The modes the option applies to: it applies while each of these keys has one of its values
    // (null: the key unset). Given outside them, the executable and the pipeline refuse it with a
    // usage error (check_applies): no option is accepted and then ignored.
    struct Applies {
        std::string key;
        std::vector<nlohmann::json> values;
        std::string why;  // appended to the message: " (the other modes never stop early)"
    };
    std::vector<Applies> applies;
    // Writes a (valid, non-null) value into the bound field of the stage's options struct.
    std::function<void(void* params, const nlohmann::json& value)> store;

    // Fluent refinements used by the declarations.
    ParamSpec& in(double lo, double hi) { min = lo, max = hi; return *this; }
    ParamSpec& at_least(double lo) { min = lo; return *this; }
    ParamSpec& above_zero() { positive = true; return *this; }
    ParamSpec& one_of(std::vector<nlohmann::json> values) { choices = std::move(values); return *this; }
    ParamSpec& excluding(std::vector<std::string> keys) { excludes = std::move(keys); return *this; }
    ParamSpec& input_file(std::string kind) { input = std::move(kind); return *this; }
    ParamSpec& only_with(std::string key, std::vector<nlohmann::json> values, std::string why = "") {
        applies.push_back({std::move(key), std::move(values), std::move(why)});
        return *this;
    }
};

// Binds declarations to the fields of an options struct P; the default is the field's initial
// value in P{} (so it is written once, in the struct).
//   Declare<VoxelizeParams> d(spec.params);
//   d(&VoxelizeParams::pad, "pad", "voxels of padding on every side").in(0, 1000);
template <class P>
class Declare {
public:
    explicit Declare(std::vector<ParamSpec>& out) : out_(out) {}

    template <class T>
    ParamSpec& operator()(T P::*field, std::string key, std::string help) {
        ParamSpec s;
        s.option = "--" + key;
        for (char& c : s.option) if (c == '_') c = '-';
        s.key = std::move(key);
        s.help = std::move(help);
        s.type = type_of<T>();
        const P defaults{};
        s.default_value = to_value(defaults.*field);
        s.store = [field](void* p, const nlohmann::json& v) { assign(static_cast<P*>(p)->*field, v); };
        out_.push_back(std::move(s));
        return out_.back();
    }

private:
    template <class T> struct is_optional : std::false_type {};
    template <class T> struct is_optional<std::optional<T>> : std::true_type {};

    template <class T>
    static ParamType type_of() {
        if constexpr (is_optional<T>::value) return type_of<typename T::value_type>();
        else if constexpr (std::is_same_v<T, bool>) return ParamType::flag;
        else if constexpr (std::is_integral_v<T>) return ParamType::integer;
        else if constexpr (std::is_floating_point_v<T>) return ParamType::number;
        else return ParamType::string;
    }
    template <class T>
    static nlohmann::json to_value(const T& v) {
        if constexpr (is_optional<T>::value) return v ? nlohmann::json(*v) : nlohmann::json();
        else return nlohmann::json(v);
    }
    template <class T>
    static void assign(T& field, const nlohmann::json& v) {
        if constexpr (is_optional<T>::value) field = v.get<typename T::value_type>();
        else field = v.get<T>();
    }

    std::vector<ParamSpec>& out_;
};

// What a stage run sees. Files of earlier stages are found by kind ("voxelmap", "distance"...).
struct StageContext {
    std::filesystem::path mesh;                          // the input mesh as given
    std::filesystem::path output;                        // the file this stage writes
    const std::map<std::string, std::filesystem::path>* inputs = nullptr;  // kind -> file
    nlohmann::json params;                               // every key of the stage: given or default (null = unset)
    Progress progress;
    // Loads the mesh with these options once per mesh run (stages share it).
    std::function<const LoadedMesh&(const MeshLoadOptions&)> load_mesh;
    // True when the stage runs for its executable (apps/common/stage_call.hpp): messages then
    // name options as the executable spells them.
    bool executable = false;
    // In a pipeline: the stages after this one, in order, as {"stage": name, "params": {every key}}
    // (the voxelize stage's memory estimate counts a later distance stage's gradient). Empty for
    // an executable.
    nlohmann::json later = nlohmann::json::array();
    // An assembly's geometry (haptic-pipeline --assembly): the distance stage also writes the
    // field's prepared sampler beside it (formats/sampler.md), from the values still in memory.
    bool prepared_sampler = false;
    // A parameter as the user wrote it: "--min-stacks" for the executable, "min_stacks" in a pipeline.
    std::string option_name(const std::string& key) const;
};

// A stage's summary facts (what its executable prints with --json, minus file names).
using StageRun = std::function<nlohmann::json(const StageContext&)>;

// Names a key as the caller spells it ("min_stacks" or "--min-stacks").
using Spelling = std::function<std::string(const std::string& key)>;

struct StageSpec {
    std::string name;                 // "voxelize"
    std::string tool;                 // "haptic-voxelize"
    std::string description;
    std::string output_name;          // file name in the mesh's folder: "voxelize.vdb"
    std::string produces;             // kind of the output: "voxelmap"
    std::vector<std::string> needs;   // kinds of earlier outputs it reads ("mesh" is always there);
                                      // "a|b": either, the first one a stage made preferred
    std::vector<ParamSpec> params;    // the declaration: every option of the executable but...
    std::vector<std::string> executable_only;  // ...these (files, output paths; see stage.cpp)
    bool available = false;           // false: the library is not in this build; validation rejects it
    bool deterministic = true;        // false: the output holds measurements (timings) that vary per run
    bool runs_alone = false;          // true: it times itself, so in a batch no other stage runs
                                      // meanwhile (stage_gate.hpp)
    // Checks between options, for the executable and the pipeline alike: returns {} or {key, what
    // is wrong}, naming options with `name`. `params` holds every key (null = unset).
    std::function<std::pair<std::string, std::string>(const nlohmann::json& params, const Spelling& name)> check;
    StageRun run;                     // reads the typed options (read_params), returns to_json(result)

    const ParamSpec* param(std::string_view key) const;
};

// Every stage hapticprep knows, in pipeline order; unavailable ones included (so that validation
// can say "not available in this build" instead of "unknown").
const std::vector<StageSpec>& stages();
const StageSpec* find_stage(std::string_view name);

// The options every executable has that no stage declares (--help, --version, --json, --quiet,
// --threads): the common part of StageSpec::executable_only.
const std::vector<std::string>& tool_options();

// The stage's options struct from resolved params (every key; null = leave the field's default).
template <class P>
P read_params(const std::vector<ParamSpec>& declared, const nlohmann::json& params) {
    P p{};
    for (const ParamSpec& s : declared)
        if (params.contains(s.key) && !params[s.key].is_null()) s.store(&p, params[s.key]);
    return p;
}
template <class P>
P read_params(const StageSpec& spec, const nlohmann::json& params) {
    return read_params<P>(spec.params, params);
}

// The options given outside the modes they apply to (ParamSpec::applies): {} or {key, what is
// wrong}, naming options with `name`. `params` holds every key (null = unset), `given` the keys
// the caller set; a flag given as false counts as not given. Runs before StageSpec::check, for the
// executable and the pipeline alike.
std::pair<std::string, std::string> check_applies(const StageSpec& spec, const nlohmann::json& params,
                                                  const nlohmann::json& given, const Spelling& name);

// Normalises a parameter name as users write it: "--voxel-size", "voxel-size" -> "voxel_size".
std::string normalize_key(std::string_view key);

// Checks one value against its spec; returns an empty string when it is valid, else what is
// wrong ("must be an integer in [0, 1000] (got 2000)").
std::string check_value(const ParamSpec& spec, const nlohmann::json& value);

// The declared range or choices in words ("in [0, 1000]", "> 0", "one of auto, vote"; "" for
// none): what --help shows beside the option.
std::string range_text(const ParamSpec& spec);

// A value as a command line spells it: strings bare, the rest as JSON ("0.5", "true").
std::string value_text(const nlohmann::json& value);

// Parses a command-line value ("0.001", "true", "mm") into the parameter's type; nullopt when
// it cannot be read as that type.
std::optional<nlohmann::json> parse_value(const ParamSpec& spec, std::string_view text);

}  // namespace hp::pipeline
