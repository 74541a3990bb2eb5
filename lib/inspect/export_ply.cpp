#include "inspect/export_ply.hpp"

#include <bit>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "formats/container.hpp"
#include "formats/shell.hpp"

namespace hp::inspect {

static_assert(std::endian::native == std::endian::little, "the binary PLY writer assumes a little-endian host");

void write_ply(const std::filesystem::path& path, std::span<const Vec3d> points, std::span<const Vec3d> normals,
               bool ascii, const std::string& comment) {
    if (points.size() != normals.size()) throw std::invalid_argument("write_ply: points and normals differ in length");
    std::string out = "ply\nformat ";
    out += ascii ? "ascii 1.0\n" : "binary_little_endian 1.0\n";
    if (!comment.empty()) {
        std::string line = comment;
        for (char& c : line)
            if (c == '\n' || c == '\r') c = ' ';
        out += "comment " + line + "\n";
    }
    out += "element vertex " + std::to_string(points.size()) + "\n";
    for (const char* p : {"x", "y", "z", "nx", "ny", "nz"}) out += std::string("property float ") + p + "\n";
    out += "end_header\n";
    if (ascii) {
        char buf[160];
        for (std::size_t i = 0; i < points.size(); ++i) {
            const Vec3d &p = points[i], &n = normals[i];
            int len = std::snprintf(buf, sizeof buf, "%.9g %.9g %.9g %.9g %.9g %.9g\n", double(float(p.x)),
                                    double(float(p.y)), double(float(p.z)), double(float(n.x)), double(float(n.y)),
                                    double(float(n.z)));
            out.append(buf, static_cast<std::size_t>(len));
        }
    } else {
        const std::size_t header = out.size();
        out.resize(header + points.size() * 6 * sizeof(float));
        char* dst = out.data() + header;
        for (std::size_t i = 0; i < points.size(); ++i) {
            const float v[6] = {float(points[i].x), float(points[i].y), float(points[i].z),
                                float(normals[i].x), float(normals[i].y), float(normals[i].z)};
            std::memcpy(dst, v, sizeof v);
            dst += sizeof v;
        }
    }
    write_file_atomically(path, out);
}

std::size_t export_shell_ply(const std::filesystem::path& input, const std::filesystem::path& output, bool ascii) {
    if (!container::looks_like_container(input))
        fail_input(input.string(), "is not a pointshell or tree file; --export ply exports the points of those");
    const ShellFile f = read_shell_file(input);
    write_ply(output, f.shell.points, f.shell.normals, ascii,
              std::string(container::kind_name(f.kind)) + " " + input.filename().string());
    return f.shell.points.size();
}

}  // namespace hp::inspect
