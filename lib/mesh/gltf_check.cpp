// lib/mesh/gltf_check: a glTF 2.0 document checked against what Assimp 5.2's glTF 2.0 importer
// trusts (gltf_check.hpp). The document is read as that importer reads it: its JSON parser stops at
// the first NUL byte and takes bytes that are not UTF-8, a member is found by its first occurrence,
// an index or count is a number only when it is an unsigned integer, a missing or unknown value
// takes the importer's default.
#include "mesh/gltf_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace hp {

namespace {

using Json = nlohmann::ordered_json;

// Deeper JSON than any glTF writer produces; Assimp's parser recurses once per level.
constexpr int kMaxDepth = 512;
// An accessor without a buffer view (zeros, patched by its sparse values) is allocated whole.
constexpr std::uint64_t kMaxZeroFilledBytes = std::uint64_t{1} << 30;
// A morph target's attribute index (POSITION_n): Assimp resizes a list to n + 1 (and follows an
// empty entry of it); glTF names no index there.
constexpr long kNoIndex = 0;
// Deeper node hierarchies than any glTF writer produces; Assimp reads and converts them recursively.
constexpr std::uint64_t kMaxNodeDepth = 1024;

// The JSON as Assimp's parser reads it: up to the first NUL byte. Keys that appear twice in one
// object are refused (the specification forbids them; Assimp would take the first, nlohmann the
// last). JSON that is not UTF-8 is read with those bytes replaced, as Assimp's parser takes them.
std::optional<Json> parse_json(std::string_view json, bool must_parse, const std::string& where) {
    std::string text(json.substr(0, json.find('\0')));
    for (int attempt = 0;; ++attempt) {
        std::vector<std::set<std::string>> keys;
        const auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) {
            if (depth > kMaxDepth)
                fail_input(where, "the glTF JSON nests deeper than " + std::to_string(kMaxDepth) + " levels (corrupt)");
            if (event == Json::parse_event_t::object_start) keys.emplace_back();
            if (event == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
            if (event == Json::parse_event_t::key && !keys.empty()) {
                const std::string& key = parsed.get_ref<const std::string&>();
                if (key.find('\x7f') == std::string::npos && !keys.back().insert(key).second)
                    fail_input(where, "the glTF JSON has the key \"" + key.substr(0, 80) + "\" twice in one object (corrupt)");
            }
            return true;
        };
        try {
            return Json::parse(text, callback);
        } catch (const Json::exception& e) {
            bool replaced = false;
            for (char& c : text)
                if (static_cast<unsigned char>(c) >= 0x80) c = '\x7f', replaced = true;
            if (attempt == 0 && replaced) continue;
            if (!must_parse) return std::nullopt;
            std::string reason = e.what();
            for (char& c : reason)
                if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
            fail_input(where, "the glTF JSON does not parse (" + reason.substr(0, 160) + ")");
        }
    }
}

// Members as Assimp's reader takes them (rapidjson's IsUint, IsUint64, IsInt).
const Json* member(const Json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}
std::optional<std::uint32_t> index_member(const Json& object, const char* key) {
    const Json* v = member(object, key);
    if (v && v->is_number_unsigned() && v->get<std::uint64_t>() <= 0xffffffffu) return v->get<std::uint32_t>();
    return std::nullopt;
}
std::uint64_t size_member(const Json& object, const char* key) {
    const Json* v = member(object, key);
    return v && v->is_number_unsigned() ? v->get<std::uint64_t>() : 0;
}
std::int64_t int_member(const Json& object, const char* key, std::int64_t fallback) {
    const Json* v = member(object, key);
    if (!v || !v->is_number_integer()) return fallback;
    if (v->is_number_unsigned()) return v->get<std::uint64_t>() <= 0x7fffffffu ? v->get<std::int64_t>() : fallback;
    const std::int64_t i = v->get<std::int64_t>();
    return i >= INT32_MIN ? i : fallback;
}
const Json& array_member(const Json& object, const char* key) {
    static const Json empty = Json::array();
    const Json* v = member(object, key);
    return v && v->is_array() ? *v : empty;
}

// a + b * c + d, saturated at 2^64 - 1.
std::uint64_t extent(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) {
    std::uint64_t product = 0, sum = 0;
    if (__builtin_mul_overflow(b, c, &product) || __builtin_add_overflow(a, product, &sum) || __builtin_add_overflow(sum, d, &sum))
        return UINT64_MAX;
    return sum;
}

// glibc's atoi of the text after a '_' in an attribute name (strtol saturated, then cut to int).
long attribute_index(const std::string& name, std::size_t prefix) {
    if (name.size() <= prefix || name[prefix] != '_') return 0;
    const long value = std::strtol(name.c_str() + prefix + 1, nullptr, 10);
    return static_cast<int>(static_cast<std::uint32_t>(static_cast<unsigned long>(value)));
}

struct Buffer {
    std::uint64_t length = 0;  // what Assimp holds (a binary file's buffer 0: the BIN chunk)
    std::string_view bytes;    // the bytes, when the file holds them (BIN chunk, data: URI)
    bool base64 = false;       // `bytes` is base64 text
    bool readable = false;
    std::string external;      // the file a URI names, as Assimp opens it (from the working folder)
    // Byte `at` (< length), decoded as Assimp's Base64::Decode does.
    unsigned byte_at(std::uint64_t at) const {
        if (!base64) return static_cast<unsigned char>(bytes[at]);
        const auto value = [&](std::uint64_t i) -> unsigned {
            const char c = bytes[i];
            if (c >= 'A' && c <= 'Z') return static_cast<unsigned>(c - 'A');
            if (c >= 'a' && c <= 'z') return static_cast<unsigned>(c - 'a' + 26);
            if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0' + 52);
            return c == '+' ? 62 : c == '/' ? 63 : c == '=' ? 64 : 0;
        };
        const std::uint64_t group = at / 3 * 4;
        const unsigned b0 = value(group), b1 = value(group + 1), b2 = value(group + 2), b3 = value(group + 3);
        const unsigned byte[3] = {(b0 << 2) | (b1 >> 4), (b1 << 4) | (b2 >> 2), (b2 << 6) | b3};
        return byte[at % 3] & 0xffu;
    }
};

struct View {
    std::uint32_t buffer = 0;
    std::uint64_t offset = 0, length = 0;
    std::uint32_t stride = 0;
    std::string past_its_buffer;  // why it ends past its buffer; refused when a reader uses it
};

struct Accessor {
    bool known = false;  // false: Assimp refuses the accessor when it reads it
    std::optional<std::uint32_t> view;
    std::uint64_t offset = 0;
    std::uint32_t count = 0, element = 0, stride = 0;
    bool sparse = false;
};

// A data: URI as Assimp's ParseDataURI splits it: where its data begins and whether it is base64.
// Assimp keeps the offsets of the URI's parts in signed chars: a header past 127 bytes wraps.
struct DataUri {
    std::size_t data = 5;
    bool base64 = false;
};
std::optional<DataUri> data_uri(std::string_view uri, const std::string& what, const std::string& where) {
    if (uri.compare(0, 5, "data:") != 0) return std::nullopt;
    DataUri parsed;
    std::size_t i = 5;
    while (i < uri.size() && uri[i] != ';' && uri[i] != ',') ++i;
    while (i < uri.size() && uri[i] == ';') {
        const std::size_t j = ++i;
        while (i < uri.size() && uri[i] != ';' && uri[i] != ',') ++i;
        if (uri.compare(j, 6, "base64") == 0) parsed.base64 = true;
    }
    if (i >= uri.size()) return DataUri{};
    if (i + 1 > 127)
        fail_input(where, "the glTF " + what + " has a data: URI whose header (before its ',') is " + std::to_string(i) +
                              " bytes long; the glTF importer reads at most 126 (corrupt)");
    parsed.data = i + 1;
    return parsed;
}

class Checker {
public:
    Checker(const Json& doc, bool binary, std::string_view bin, const std::string& where)
        : doc_(doc), binary_(binary), bin_(bin), where_(where) {}

    void run() {
        read_buffers();
        read_views();
        read_accessors();
        check_meshes();
        check_animations();
        check_skins();
        check_nodes();
        const Json& images = array_member(doc_, "images");
        for (std::size_t i = 0; i < images.size(); ++i) {
            const std::string name = "image " + std::to_string(i);
            if (const Json* uri = member(images[i], "uri"); uri && uri->is_string())
                data_uri(uri->get_ref<const std::string&>(), name, where_);
            else if (const std::optional<std::uint32_t> view = index_member(images[i], "bufferView"))
                check_view(name, *view);
        }
    }

private:
    [[noreturn]] void refuse(const std::string& what) const { fail_input(where_, "glTF " + what + " (corrupt)"); }

    void read_buffers() {
        const Json& list = array_member(doc_, "buffers");
        buffers_.resize(std::max<std::size_t>(list.size(), binary_ ? 1 : 0));
        for (std::size_t i = 0; i < list.size(); ++i) {
            Buffer& b = buffers_[i];
            const Json* uri = member(list[i], "uri");
            const std::uint64_t stated = size_member(list[i], "byteLength");
            if (binary_ && i == 0) continue;  // Assimp's buffer 0 of a binary file is its BIN chunk
            if (!uri || !uri->is_string()) continue;  // no bytes (a stated length is refused by Assimp)
            const std::string& text = uri->get_ref<const std::string&>();
            const std::optional<DataUri> data = data_uri(text, "buffer " + std::to_string(i), where_);
            if (!data) {
                b.length = stated;  // another file: Assimp reads exactly byteLength bytes or refuses
                b.external = text;
                continue;
            }
            b.bytes = std::string_view(text).substr(data->data);
            b.base64 = data->base64;
            if (!b.base64) {
                b.length = b.bytes.size(), b.readable = true;  // Assimp refuses another stated length
            } else if (b.bytes.size() % 4 == 0 && b.bytes.size() >= 4) {
                const std::size_t n = b.bytes.size();
                b.length = n / 4 * 3 - (b.bytes[n - 1] == '=') - (b.bytes[n - 2] == '=');
                b.readable = true;
            }
        }
        if (binary_) buffers_[0] = Buffer{bin_.size(), bin_, false, true, {}};
    }

    void read_views() {
        const Json& list = array_member(doc_, "bufferViews");
        views_.resize(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            View& v = views_[i];
            const std::string name = "bufferView " + std::to_string(i);
            const std::optional<std::uint32_t> buffer = index_member(list[i], "buffer");
            if (!buffer || *buffer >= buffers_.size()) {
                v.past_its_buffer = name + " names no buffer of the " + std::to_string(buffers_.size()) + " there are";
                continue;
            }
            v.buffer = *buffer;
            v.offset = size_member(list[i], "byteOffset");
            v.length = size_member(list[i], "byteLength");
            v.stride = static_cast<std::uint32_t>(int_member(list[i], "byteStride", 0));
            const std::uint64_t have = buffers_[v.buffer].length;
            if (extent(v.offset, v.length, 1, 0) > have)
                v.past_its_buffer = (name + " (byteOffset " + std::to_string(v.offset) + ", byteLength " + std::to_string(v.length) +
                       ") ends past its buffer " + std::to_string(v.buffer) + " of " + std::to_string(have) + " bytes" +
                       (binary_ && v.buffer == 0 ? " (the BIN chunk)" : ""));
        }
    }

    // A buffer view that an accessor or an image reads (Assimp checks the others only when it
    // reads them): its index exists and it lies inside its buffer.
    void check_view(const std::string& name, std::uint32_t view) const {
        if (view >= views_.size())
            refuse(name + " names bufferView " + std::to_string(view) + " of " + std::to_string(views_.size()));
        if (!views_[view].past_its_buffer.empty()) refuse(views_[view].past_its_buffer);
    }

    // The bytes `count` elements of `element` bytes at `stride` from `offset` reach, checked
    // against the buffer view `view` (its index checked first).
    void check_within_view(const std::string& name, std::uint32_t view, std::uint64_t offset, std::uint64_t count,
                           std::uint64_t stride, std::uint64_t element) const {
        check_view(name, view);
        if (count == 0) return;
        const std::uint64_t end = extent(offset, count - 1, stride, element);
#ifdef HP_FUZZ_CANARY
        // The fuzzing canary of mesh_gltf (docs/fuzzing.md): the check below, off by one.
        if (end == views_[view].length + 1) __builtin_trap();
#endif
        if (end > views_[view].length)
            refuse(name + " reads " + std::to_string(count) + " elements of " + std::to_string(element) + " bytes, " +
                   std::to_string(stride) + " apart, from byte " + std::to_string(offset) + " of bufferView " +
                   std::to_string(view) + ", which has " + std::to_string(views_[view].length));
    }

    void read_accessors() {
        const Json& list = array_member(doc_, "accessors");
        accessors_.resize(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Json& json = list[i];
            Accessor& a = accessors_[i];
            const std::optional<std::uint32_t> count = index_member(json, "count");
            const std::uint32_t size = component_size(int_member(json, "componentType", 5120));
            if (!json.is_object() || !count || size == 0) continue;  // Assimp refuses it
            a.count = *count;
            a.element = size * components(member(json, "type"));
            a.offset = size_member(json, "byteOffset");
            a.view = index_member(json, "bufferView");
            if (member(json, "bufferView") && !a.view) continue;
            a.known = true;
            if (a.view) a.stride = *a.view < views_.size() && views_[*a.view].stride != 0 ? views_[*a.view].stride : a.element;
            const Json* sparse = member(json, "sparse");
            a.sparse = sparse && sparse->is_object();
        }
    }

    // An accessor that a mesh, an animation or a skin reads (Assimp reads no other): its elements
    // inside its buffer view, and a sparse accessor's indices and values inside theirs.
    void check_accessor(std::size_t i) const {
        const Accessor& a = accessors_[i];
        const std::string name = "accessor " + std::to_string(i);
        if (a.view) {
            if (*a.view < views_.size() && views_[*a.view].stride != 0 && views_[*a.view].stride < a.element)
                refuse(name + " has elements of " + std::to_string(a.element) + " bytes in bufferView " +
                       std::to_string(*a.view) + " of byteStride " + std::to_string(views_[*a.view].stride));
            check_within_view(name, *a.view, a.offset, a.count, a.stride, a.element);
        }
        if (a.sparse) check_sparse(name, *member(array_member(doc_, "accessors")[i], "sparse"), a);
    }

    // A sparse accessor: Assimp allocates count × element bytes for it (zeros without a buffer view)
    // and patches them with `count` values at `count` indices, each read from its buffer view
    // without a check; without its indices or values it follows a null pointer.
    void check_sparse(const std::string& name, const Json& sparse, const Accessor& a) const {
        if (!a.view && extent(0, a.count, a.element, 0) > kMaxZeroFilledBytes)
            refuse(name + " describes " + std::to_string(extent(0, a.count, a.element, 0)) +
                   " bytes without a bufferView (more than 1 GiB)");
        const Json* count = member(sparse, "count");
        if (!count || !count->is_number_unsigned() || count->get<std::uint64_t>() > a.count)
            refuse(name + " has a sparse count that is not a number from 0 to its count " + std::to_string(a.count));
        const std::uint64_t n = count->get<std::uint64_t>();
        const Json* indices = member(sparse, "indices");
        const Json* values = member(sparse, "values");
        const std::optional<std::uint32_t> index_view = indices ? index_member(*indices, "bufferView") : std::nullopt;
        const std::optional<std::uint32_t> value_view = values ? index_member(*values, "bufferView") : std::nullopt;
        if (!index_view || !value_view) refuse(name + " is sparse without the bufferView of its indices and of its values");
        const std::uint32_t index_size = component_size(int_member(*indices, "componentType", 5120));
        check_within_view(name + "'s sparse indices", *index_view, size_member(*indices, "byteOffset"), n, index_size, index_size);
        check_within_view(name + "'s sparse values", *value_view, size_member(*values, "byteOffset"), n, a.element, a.element);
    }

    static std::uint32_t component_size(std::int64_t type) {
        switch (type) {
            case 5120: case 5121: return 1;
            case 5122: case 5123: return 2;
            case 5125: case 5126: return 4;
            default: return 0;
        }
    }
    static std::uint32_t components(const Json* type) {
        if (!type || !type->is_string()) return 1;
        const std::string& t = type->get_ref<const std::string&>();
        return t == "VEC2" ? 2 : t == "VEC3" ? 3 : t == "VEC4" || t == "MAT2" ? 4 : t == "MAT3" ? 9 : t == "MAT4" ? 16 : 1;
    }

    const Accessor* accessor(const std::string& name, const std::optional<std::uint32_t>& index) const {
        if (!index) return nullptr;
        if (*index >= accessors_.size())
            refuse(name + " names accessor " + std::to_string(*index) + " of " + std::to_string(accessors_.size()));
        if (!accessors_[*index].known) return nullptr;
        check_accessor(*index);
        return &accessors_[*index];
    }

    void check_meshes() const {
        const Json& meshes = array_member(doc_, "meshes");
        for (std::size_t m = 0; m < meshes.size(); ++m) {
            const Json& primitives = array_member(meshes[m], "primitives");
            for (std::size_t p = 0; p < primitives.size(); ++p)
                check_primitive("mesh " + std::to_string(m) + " primitive " + std::to_string(p), primitives[p]);
        }
    }

    void check_primitive(const std::string& name, const Json& primitive) const {
        const Accessor* indices = accessor(name + " (indices)", index_member(primitive, "indices"));
        const Accessor* position = nullptr;
        std::vector<const Accessor*> joints, weights;
        if (const Json* attributes = member(primitive, "attributes"); attributes && attributes->is_object()) {
            for (const auto& [key, value] : attributes->items()) {
                if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0xffffffffu) continue;
                const Accessor* a = accessor(name + " attribute " + key.substr(0, 40), value.get<std::uint32_t>());
                if (key.rfind("POSITION", 0) == 0 && attribute_index(key, 8) == 0 && !position) position = a;
                if (key.rfind("JOINTS", 0) == 0) joints.push_back(a);
                if (key.rfind("WEIGHTS", 0) == 0) weights.push_back(a);
            }
        }
        // The skin's weights: read per set with the count of the first set, each set paired with
        // the joints set of its number.
        if (weights.size() > joints.size())
            refuse(name + " has " + std::to_string(weights.size()) + " WEIGHTS sets for " + std::to_string(joints.size()) + " JOINTS sets");
        for (const Accessor* a : joints)
            for (const Accessor* b : weights)
                if (a && b && a->count != b->count)
                    refuse(name + " has JOINTS and WEIGHTS of " + std::to_string(a->count) + " and " + std::to_string(b->count) + " elements");
        check_targets(name, primitive);
        const std::uint32_t vertices = position ? position->count : 0;
        if (index_member(primitive, "indices") && !indices) return;  // Assimp refuses the accessor
        check_mode(name, int_member(primitive, "mode", 4), indices, vertices);
    }

    // Strips, fans and line strips take their face count as the vertex count minus 2 (or 1) in
    // unsigned arithmetic: fewer vertices wrap to 2^32 - 1 faces (64 GB) or write past the faces.
    // A line loop's closing face copies the first face's first index, which is not there when the
    // first face's indices are out of range (a null pointer followed).
    void check_mode(const std::string& name, std::int64_t mode, const Accessor* indices, std::uint32_t vertices) const {
        const std::uint64_t n = indices ? indices->count : vertices;
        const char* kind = mode == 5 ? "triangle strip" : mode == 6 ? "triangle fan" : mode == 3 ? "line strip" : "line loop";
        const std::uint64_t least = mode == 5 || mode == 6 ? 3 : mode == 2 || mode == 3 ? 2 : 0;
        if (n < least)
            refuse(name + " is a " + kind + " of " + std::to_string(n) + (indices ? " indices" : " vertices") + " (at least " +
                   std::to_string(least) + ")");
        if (mode != 2 || !indices) return;
        if (!indices->view && !indices->sparse) return;  // no data: Assimp refuses the file
        if (indices->sparse) refuse(name + " is a line loop of sparse indices (which are not checked)");
        const View& view = views_[*indices->view];
        const Buffer& buffer = buffers_[view.buffer];
        std::ifstream other;  // a buffer in another file, opened as Assimp opens it
        if (!buffer.readable) {
            other.open(buffer.external, std::ios::binary | std::ios::ate);
            if (!other || static_cast<std::uint64_t>(other.tellg()) < buffer.length) return;  // Assimp refuses the file
        }
        for (std::uint64_t i = 0; i < 2; ++i) {
            const std::uint64_t at = view.offset + indices->offset + i * indices->stride;
            unsigned char bytes[4] = {0, 0, 0, 0};
            const std::uint32_t size = std::min<std::uint32_t>(indices->element, 4);
            for (std::uint32_t b = 0; b < size && buffer.readable; ++b) bytes[b] = static_cast<unsigned char>(buffer.byte_at(at + b));
            if (!buffer.readable && !(other.seekg(static_cast<std::streamoff>(at)) && other.read(reinterpret_cast<char*>(bytes), size)))
                return;
            const std::uint32_t value = bytes[0] | (bytes[1] << 8) | (static_cast<std::uint32_t>(bytes[2]) << 16) |
                                       (static_cast<std::uint32_t>(bytes[3]) << 24);
            if (value >= vertices)
                refuse(name + " is a line loop whose first segment indexes vertex " + std::to_string(value) + " of " +
                       std::to_string(vertices));
        }
    }

    // Morph targets: Assimp files POSITION_n, NORMAL_n, TANGENT_n at n and reads entry 0.
    void check_targets(const std::string& name, const Json& primitive) const {
        const Json& targets = array_member(primitive, "targets");
        for (std::size_t t = 0; t < targets.size(); ++t) {
            if (!targets[t].is_object()) continue;
            for (const auto& [key, value] : targets[t].items()) {
                if (!value.is_number_unsigned() || value.get<std::uint64_t>() > 0xffffffffu) continue;
                accessor(name + " target " + std::to_string(t), value.get<std::uint32_t>());
                for (const std::string prefix : {"POSITION", "NORMAL", "TANGENT"})
                    if (key.rfind(prefix, 0) == 0 && attribute_index(key, prefix.size()) != kNoIndex)
                        refuse(name + " target " + std::to_string(t) + " has the attribute " + key.substr(0, 40) +
                               " (morph targets have " + prefix + " only)");
            }
        }
    }

    // Animation samplers: keys are read for every input time from the output at the input's index
    // (three per key for CUBICSPLINE), and morph weights divide the output count by the input's.
    void check_animations() const {
        const Json& animations = array_member(doc_, "animations");
        for (std::size_t a = 0; a < animations.size(); ++a) {
            const Json& samplers = array_member(animations[a], "samplers");
            for (std::size_t s = 0; s < samplers.size(); ++s) {
                const std::string name = "animation " + std::to_string(a) + " sampler " + std::to_string(s);
                const Accessor* input = accessor(name + " (input)", index_member(samplers[s], "input"));
                const Accessor* output = accessor(name + " (output)", index_member(samplers[s], "output"));
                if (!input || !output) continue;
                const Json* interpolation = member(samplers[s], "interpolation");
                const std::uint64_t per_key = interpolation && *interpolation == "CUBICSPLINE" ? 3 : 1;
                if (input->count == 0 || output->count < std::uint64_t{input->count} * per_key)
                    refuse(name + " has " + std::to_string(input->count) + " key times and " + std::to_string(output->count) +
                           " values (" + std::to_string(per_key) + " per key at least)");
            }
        }
    }

    // A skin on a node with a mesh: Assimp reads one inverse bind matrix per joint, and follows a
    // null pointer when the skin has none (the specification makes them optional).
    void check_skins() const {
        const Json& nodes = array_member(doc_, "nodes");
        const Json& skins = array_member(doc_, "skins");
        for (std::size_t n = 0; n < nodes.size(); ++n) {
            const std::optional<std::uint32_t> skin = index_member(nodes[n], "skin");
            if (!skin || !member(nodes[n], "mesh") || *skin >= skins.size()) continue;
            const std::string name = "skin " + std::to_string(*skin);
            std::uint64_t joints = 0;
            for (const Json& j : array_member(skins[*skin], "joints")) joints += j.is_number_unsigned() ? 1 : 0;
            const std::optional<std::uint32_t> matrices = index_member(skins[*skin], "inverseBindMatrices");
            if (!matrices)
                fail_input(where_, "glTF " + name + " of node " + std::to_string(n) +
                                       " has no inverseBindMatrices, which the glTF importer needs (export the skin with them)");
            const Accessor* a = accessor(name + " (inverseBindMatrices)", matrices);
            if (a && a->count < joints)
                refuse(name + " has " + std::to_string(a->count) + " inverse bind matrices for " + std::to_string(joints) + " joints");
        }
    }

    // Nodes: Assimp converts the hierarchy recursively from each scene's roots, once per path to a
    // node: a node that is the child of two nodes (or twice of one), or a root listed twice or also
    // a child, is converted once per path (a chain of nodes that each list the next twice doubles
    // the nodes at every level). glTF makes the hierarchy disjoint trees: one parent at most.
    void check_nodes() const {
        const Json& nodes = array_member(doc_, "nodes");
        constexpr std::uint64_t kNone = UINT64_MAX;
        std::vector<std::uint64_t> parent(nodes.size(), kNone);
        for (std::size_t n = 0; n < nodes.size(); ++n)
            for (const Json& c : array_member(nodes[n], "children")) {
                if (!c.is_number_unsigned() || c.get<std::uint64_t>() >= nodes.size()) continue;  // Assimp refuses it
                const std::uint64_t child = c.get<std::uint64_t>();
                if (parent[child] != kNone)
                    refuse("node " + std::to_string(child) + " is a child of node " + std::to_string(parent[child]) +
                           " and of node " + std::to_string(n) + " (a node has one parent)");
                parent[child] = n;
            }
        const Json& scenes = array_member(doc_, "scenes");
        for (std::size_t s = 0; s < scenes.size(); ++s) {
            std::set<std::uint64_t> roots;
            for (const Json& r : array_member(scenes[s], "nodes")) {
                if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= nodes.size()) continue;
                const std::uint64_t root = r.get<std::uint64_t>();
                if (!roots.insert(root).second || parent[root] != kNone)
                    refuse("scene " + std::to_string(s) + " lists node " + std::to_string(root) +
                           (parent[root] != kNone ? ", a child of node " + std::to_string(parent[root]) + "," : " twice") +
                           " as a root");
            }
        }
        // Depths, each node's computed once (a cycle of ancestors is Assimp's to refuse).
        constexpr std::uint64_t kOnPath = UINT64_MAX;
        std::vector<std::uint64_t> depth(nodes.size(), 0), path;
        for (std::size_t n = 0; n < nodes.size(); ++n) {
            path.clear();
            std::uint64_t at = n;
            for (; at != kNone && depth[at] == 0; at = parent[at]) {
                depth[at] = kOnPath;
                path.push_back(at);
            }
            const bool cycle = at != kNone && depth[at] == kOnPath;
            std::uint64_t d = at == kNone ? 0 : depth[at];
            for (std::size_t i = path.size(); i-- > 0;) {
                depth[path[i]] = cycle ? 1 : ++d;
                if (!cycle && d > kMaxNodeDepth)
                    refuse("node " + std::to_string(path[i]) + " is " + std::to_string(d) + " levels deep (at most " +
                           std::to_string(kMaxNodeDepth) + ")");
            }
        }
    }

    const Json& doc_;
    const bool binary_;
    const std::string_view bin_;
    const std::string& where_;
    std::vector<Buffer> buffers_;
    std::vector<View> views_;
    std::vector<Accessor> accessors_;
};

}  // namespace

bool check_gltf2_document(std::string_view json, bool binary, std::string_view bin, bool must_parse,
                          const std::string& where) {
    const std::optional<Json> parsed = parse_json(json, must_parse, where);
    if (!parsed) return false;
    const Json& doc = *parsed;
    const Json* asset = member(doc, "asset");
    const Json* version = asset ? member(*asset, "version") : nullptr;
    // A binary file's version is its header's (2): Assimp reads the JSON's asset.version only when
    // it is there, and a GLB without one is read as glTF 2.0.
    if (version ? !version->is_string() || version->get_ref<const std::string&>().rfind('2', 0) != 0 : !binary) return false;
    Checker(doc, binary, bin, where).run();
    return true;
}

}  // namespace hp
