// lib/mesh/obj_native: Wavefront OBJ without Assimp (obj_native.hpp). Written from the behaviour
// of Assimp 5.2.5's OBJ importer, line reader and triangulation, which the tools used for every
// OBJ file before: the native reading must give what they give, so each rule below names the
// behaviour of theirs it keeps, and everything else is declined.
#include "mesh/obj_native.hpp"

#include <cmath>
#include <cstring>

namespace hp {

namespace {

// Assimp's IOStreamBuffer reads a file in blocks of this many bytes.
constexpr std::size_t kBlockBytes = std::size_t{16} << 20;
// Names and numbers beyond this are declined: Assimp's aiString leaves a name of 1,024 bytes or
// more empty, and it reads a number of 4,096 bytes or more as two.
constexpr std::size_t kMaxName = 512;
// Assimp's OBJ importer refuses a file shorter than this.
constexpr std::size_t kMinBytes = 16;

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool ends_line(char c) { return c == '\r' || c == '\n'; }

// The tokens of a line, separated by spaces and tabs.
class Tokens {
public:
    explicit Tokens(std::string_view line) : line_(line) {}
    bool next(std::string_view& token) {
        skip_blanks();
        if (at_ == line_.size()) return false;
        const std::size_t begin = at_;
        while (at_ < line_.size() && !is_blank(line_[at_])) ++at_;
        token = line_.substr(begin, at_ - begin);
        return true;
    }
    std::string_view rest() {
        skip_blanks();
        return line_.substr(at_);
    }

private:
    void skip_blanks() {
        while (at_ < line_.size() && is_blank(line_[at_])) ++at_;
    }
    std::string_view line_;
    std::size_t at_ = 0;
};

// 10^-n as the doubles fast_atof scales a fraction of n digits by.
constexpr double kTenths[16] = {0.0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,
                                1e-8,  1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15};

// A coordinate token of a `v`, `vt` or `vn` line: Assimp counts a line's components by the tokens
// that start with a digit or a sign, so a token starting with '.' would change the count; and it
// copies a token into a buffer of 4,096 bytes, reading what does not fit as the next one.
bool parse_coordinate(std::string_view token, float& out) {
    if (token.empty() || token.size() > kMaxName || !(is_digit(token[0]) || token[0] == '-' || token[0] == '+')) return false;
    return parse_obj_real(token, out);
}

// A face index: a sign and 1 to 9 digits without a leading zero. Assimp reads it with atoi and
// steps over as many characters as the value has digits, so a leading zero or a '+' would be
// read twice; 0 makes it refuse the file.
bool parse_index(std::string_view text, long& out) {
    std::size_t i = text.size() > 0 && text[0] == '-' ? 1 : 0;
    if (text.size() == i || text.size() - i > 9 || text[i] == '0') return false;
    long value = 0;
    for (std::size_t k = i; k < text.size(); ++k) {
        if (!is_digit(text[k])) return false;
        value = value * 10 + (text[k] - '0');
    }
    out = i ? -value : value;
    return true;
}

// A face corner: "v", "v/t", "v//n" or "v/t/n"; the vertex index in `vertex`. With normals read
// before the face and no texture coordinates, Assimp takes the `t` of "v/t/n" for a normal and
// the `n` for a fourth index, and then reads on past the line's end: `full` is false then.
bool parse_corner(std::string_view token, bool full, long& vertex) {
    const std::size_t first = token.find('/');
    if (!parse_index(token.substr(0, first), vertex)) return false;
    if (first == std::string_view::npos) return true;
    const std::string_view tail = token.substr(first + 1);
    const std::size_t second = tail.find('/');
    long ignored = 0;
    if (second == std::string_view::npos) return parse_index(tail, ignored);                 // v/t
    if (second > 0 && (!full || !parse_index(tail.substr(0, second), ignored))) return false;  // v/t/n
    return tail.find('/', second + 1) == std::string_view::npos && parse_index(tail.substr(second + 1), ignored);
}

// Whether a buffer of `line + 1` bytes ends exactly at the line's end for Assimp's line reader:
// its line buffer is as long as the current block (the first, or the last one once read), doubled
// while the line does not fit, and its `g` parser drops a name whose line end is the buffer's last
// byte. Such a `g` line is declined.
bool fills_line_buffer(std::size_t line, std::size_t file_bytes) {
    const std::size_t first = std::min(file_bytes, kBlockBytes);
    const std::size_t last = file_bytes - (file_bytes - 1) / kBlockBytes * kBlockBytes;
    for (std::size_t block : {first, last})
        for (std::size_t size = block; size <= line + 1; size *= 2)
            if (size == line + 1) return true;
    return false;
}

// The model as Assimp's OBJ parser builds it: objects that list meshes, meshes that hold faces
// and a material index, the current object, mesh and material.
struct Model {
    struct Mesh {
        std::vector<std::uint32_t> corners;  // positions, in face order
        std::vector<std::uint8_t> sizes;     // corners per face: 3 or 4
        long material = -1;                  // -1: none
    };
    struct Object {
        std::string name;
        std::vector<std::size_t> meshes;
    };
    std::vector<std::array<float, 3>> positions;
    std::vector<Mesh> meshes;
    std::vector<Object> objects;
    std::vector<std::string> materials{"DefaultMaterial"};  // Assimp's library: its default first
    std::size_t texture_coordinates = 0, normals = 0;       // `vt` and `vn` lines read so far
    long object = -1, mesh = -1;
    std::string material;        // the current material's name
    bool has_material = false;
    std::string active_group;

    long material_index(const std::string& name) const {
        for (std::size_t i = 0; i < materials.size(); ++i)
            if (materials[i] == name) return static_cast<long>(i);
        return -1;
    }
    void create_mesh() {
        meshes.emplace_back();
        mesh = static_cast<long>(meshes.size() - 1);
        if (object >= 0) objects[static_cast<std::size_t>(object)].meshes.push_back(meshes.size() - 1);
    }
    void create_object(const std::string& name) {
        objects.push_back({name, {}});
        object = static_cast<long>(objects.size() - 1);
        create_mesh();
        if (has_material) meshes.back().material = material_index(material);
    }
    // `usemtl`: a new mesh when the current one has faces of another material.
    void use_material(const std::string& name) {
        if (has_material && material == name) return;
        if (material_index(name) < 0) materials.push_back(name);
        material = name;
        has_material = true;
        const long index = material_index(name);
        if (mesh < 0) {
            create_mesh();
        } else {
            const Mesh& current = meshes[static_cast<std::size_t>(mesh)];
            if (current.material != -1 && current.material != index && !current.sizes.empty()) create_mesh();
        }
        meshes[static_cast<std::size_t>(mesh)].material = index;
    }
    // `o`: an object of that name again if there is one (the current mesh stays), else a new one.
    void use_object(const std::string& name) {
        for (std::size_t i = 0; i < objects.size(); ++i)
            if (objects[i].name == name) {
                object = static_cast<long>(i);
                return;
            }
        create_object(name);
    }
    // `g`: a new object whenever the group changes, even to a name used before.
    void use_group(const std::string& name) {
        if (active_group == name) return;
        create_object(name);
        active_group = name;
    }
    bool add_face(const long* corners, std::size_t n) {
        if (object < 0) create_object("defaultobject");
        if (mesh < 0) create_mesh();
        Mesh& m = meshes[static_cast<std::size_t>(mesh)];
        for (std::size_t c = 0; c < n; ++c) {
            // 1-based, or relative to the positions read so far.
            const long index = corners[c] > 0 ? corners[c] - 1 : static_cast<long>(positions.size()) + corners[c];
            if (index < 0) return false;
            m.corners.push_back(static_cast<std::uint32_t>(index));
        }
        m.sizes.push_back(static_cast<std::uint8_t>(n));
        return true;
    }
};

// One line (without its end) into the model; false to decline the file.
bool read_line(std::string_view line, std::size_t file_bytes, Model& model) {
    if (line.empty() || line[0] == '#') return true;
    Tokens tokens(line);
    std::string_view keyword;
    if (!tokens.next(keyword)) return true;           // blanks only
    if (keyword.data() != line.data()) return false;  // Assimp skips an indented statement
    std::string_view token;
    if (keyword == "v" || keyword == "vn" || keyword == "vt") {
        std::array<float, 3> value{};
        std::size_t n = 0;
        for (; tokens.next(token); ++n)
            if (n == 3 || !parse_coordinate(token, value[n])) return false;
        if (keyword == "v" && n == 3) model.positions.push_back(value);
        model.texture_coordinates += keyword == "vt";
        model.normals += keyword == "vn";
        return n == 3 || (keyword == "vt" && n == 2);
    }
    if (keyword == "f") {
        long corners[4];
        std::size_t n = 0;
        const bool full = model.texture_coordinates > 0 || model.normals == 0;
        for (; tokens.next(token); ++n)
            if (n == 4 || !parse_corner(token, full, corners[n])) return false;
        return n >= 3 && model.add_face(corners, n);
    }
    if (keyword == "s" || keyword.substr(0, 6) == "mtllib") return true;  // Assimp reads no library (import.cpp)
    if (keyword == "o") {
        if (!tokens.next(token) || token.size() > kMaxName) return false;
        model.use_object(std::string(token));  // the first word: Assimp ignores the rest
        return true;
    }
    if (keyword == "g") {
        // The rest of the line as it is, inner and trailing blanks included, as Assimp names it.
        const std::string_view name = tokens.rest();
        if (name.empty() || name.size() > kMaxName || fills_line_buffer(line.size(), file_bytes)) return false;
        model.use_group(std::string(name));
        return true;
    }
    if (keyword == "usemtl") {
        std::string_view name = tokens.rest();
        while (!name.empty() && is_blank(name.back())) name.remove_suffix(1);
        if (name.empty() || name.size() > kMaxName) return false;
        model.use_material(std::string(name));
        return true;
    }
    return false;
}

// The start corner of Assimp's cut of a quad: the first corner whose two angles to the diagonal
// opposite sum past pi (the concave one), else corner 0. Float arithmetic in Assimp's order:
// differences, normalised by multiplying with the reciprocal of the length, dot products, acosf.
unsigned quad_start(const std::array<float, 3>* p[4]) {
    struct V {
        float x, y, z;
    };
    const auto minus = [](const std::array<float, 3>& a, const std::array<float, 3>& b) {
        return V{a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    };
    const auto normalize = [](V v) {
        const float length = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
        if (length == 0) return v;
        const float inverse = 1.0f / length;
        return V{v.x * inverse, v.y * inverse, v.z * inverse};
    };
    const auto dot = [](const V& a, const V& b) { return a.x * b.x + a.y * b.y + a.z * b.z; };
    for (unsigned i = 0; i < 4; ++i) {
        const std::array<float, 3>& v = *p[i];
        const V left = normalize(minus(*p[(i + 3) % 4], v));
        const V diagonal = normalize(minus(*p[(i + 2) % 4], v));
        const V right = normalize(minus(*p[(i + 1) % 4], v));
        const float angle = std::acos(dot(left, diagonal)) + std::acos(dot(right, diagonal));
        if (angle > 3.1415926538f) return i;  // Assimp's AI_MATH_PI_F
    }
    return 0;
}

// A mesh of the model as the scene holds it: its triangles, its quads cut in two.
ObjMesh scene_mesh(Model::Mesh& mesh, const std::vector<std::array<float, 3>>& positions) {
    ObjMesh out;
    out.triangles.reserve(mesh.sizes.size());
    std::uint32_t base = 0;
    for (std::uint8_t size : mesh.sizes) {
        if (size == 3) {
            out.triangles.push_back({base, base + 1, base + 2});
        } else {
            const std::array<float, 3>* p[4];
            for (unsigned c = 0; c < 4; ++c) p[c] = &positions[mesh.corners[base + c]];
            const unsigned s = quad_start(p);
            out.triangles.push_back({base + s, base + (s + 1) % 4, base + (s + 2) % 4});
            out.triangles.push_back({base + s, base + (s + 2) % 4, base + (s + 3) % 4});
        }
        base += size;
    }
    out.corners = std::move(mesh.corners);
    return out;
}

// What Assimp's line reader does differently from splitting at '\r' and '\n': NUL and form feed
// end a line, a backslash before a line end joins two lines (and past the first block Assimp reads
// a byte beyond the block to decide), and past the first block a last line without an end is lost.
bool plain_lines(std::string_view bytes) {
    if (bytes.find('\0') != std::string_view::npos || bytes.find('\f') != std::string_view::npos) return false;
    for (std::size_t at = bytes.find('\\'); at != std::string_view::npos; at = bytes.find('\\', at + 1))
        if (bytes.size() > kBlockBytes || at + 1 == bytes.size() || ends_line(bytes[at + 1])) return false;
    if (bytes.size() > kBlockBytes && !ends_line(bytes.back())) return false;
    // import.cpp makes every "mtllib" "#tllib" before Assimp reads a file: a comment where it starts
    // a line, which read_line takes it for; anywhere else it would change a name or a number.
    for (std::size_t at = bytes.find("mtllib"); at != std::string_view::npos; at = bytes.find("mtllib", at + 1))
        if (at > 0 && !ends_line(bytes[at - 1])) return false;
    return true;
}

}  // namespace

bool parse_obj_real(std::string_view t, float& out) {
    std::size_t i = 0;
    const bool negative = !t.empty() && t[0] == '-';
    if (!t.empty() && (t[0] == '-' || t[0] == '+')) ++i;
    const auto digit_at = [&](std::size_t k) { return k < t.size() && is_digit(t[k]); };
    std::uint64_t whole = 0;
    std::size_t digits = 0;
    for (; digit_at(i); ++i, ++digits) whole = whole * 10 + static_cast<std::uint64_t>(t[i] - '0');
    const bool fraction = i < t.size() && t[i] == '.' && digit_at(i + 1);
    if (digits > 18 || (digits == 0 && !fraction)) return false;
    float f = digits > 0 ? static_cast<float>(whole) : 0.0f;
    if (fraction) {
        // The first 15 digits, scaled in double, rounded to float, added in float.
        std::uint64_t part = 0;
        std::size_t kept = 0;
        for (++i; digit_at(i); ++i)
            if (kept < 15) {
                part = part * 10 + static_cast<std::uint64_t>(t[i] - '0');
                ++kept;
            }
        f += static_cast<float>(static_cast<double>(part) * kTenths[kept]);
    } else if (i < t.size() && t[i] == '.') {
        ++i;  // "1." and "1.e3": a trailing point is read as nothing
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        const bool down = i < t.size() && t[i] == '-';
        if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
        std::uint64_t power = 0;
        std::size_t power_digits = 0;
        for (; digit_at(i); ++i, ++power_digits) power = power * 10 + static_cast<std::uint64_t>(t[i] - '0');
        if (power_digits == 0 || power_digits > 18) return false;
        float e = static_cast<float>(power);
        if (down) e = -e;
        f *= std::pow(10.0f, e);  // powf, in float as Assimp multiplies
    }
    if (i != t.size()) return false;
    out = negative ? -f : f;
    return true;
}

std::optional<ObjScene> read_obj_native(std::string_view bytes) {
    if (bytes.size() < kMinBytes || !plain_lines(bytes)) return std::nullopt;
    Model model;
    model.positions.reserve(bytes.size() / 64);
    for (std::size_t begin = 0; begin < bytes.size();) {
        std::size_t end = begin;
        while (end < bytes.size() && !ends_line(bytes[end])) ++end;
        if (!read_line(bytes.substr(begin, end - begin), bytes.size(), model)) return std::nullopt;
        begin = end + 1;
    }
    ObjScene scene;
    const std::size_t count = model.positions.size();
    for (const Model::Mesh& mesh : model.meshes)
        for (std::uint32_t c : mesh.corners)
            if (c >= count) return std::nullopt;  // Assimp refuses an index out of range
    for (Model::Object& object : model.objects) {
        ObjNode& node = scene.nodes.emplace_back();
        node.name = object.name;
        for (std::size_t m : object.meshes) {
            if (model.meshes[m].sizes.empty()) continue;  // Assimp makes no mesh of no face
            node.meshes.push_back(static_cast<std::uint32_t>(scene.meshes.size()));
            scene.meshes.push_back(scene_mesh(model.meshes[m], model.positions));
        }
    }
    if (scene.meshes.empty()) return std::nullopt;
    scene.positions = std::move(model.positions);
    return scene;
}

}  // namespace hp
