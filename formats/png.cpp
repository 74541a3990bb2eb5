#include "formats/png.hpp"

#include <cassert>
#include <string>

#include <png.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hp::png {

void write_rgb(const std::filesystem::path& path, int width, int height, const std::vector<std::uint8_t>& rgb) {
    assert(width > 0 && height > 0);
    assert(rgb.size() == static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
    // libpng's simplified API: no setjmp error handling needed, errors come back as a message.
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = static_cast<png_uint_32>(width);
    image.height = static_cast<png_uint_32>(height);
    image.format = PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    if (!png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), 0, nullptr))
        fail_write(path.string(), std::string("cannot encode the PNG image (") + image.message + ")");
    std::string bytes(size, '\0');
    if (!png_image_write_to_memory(&image, bytes.data(), &size, 0, rgb.data(), 0, nullptr))
        fail_write(path.string(), std::string("cannot encode the PNG image (") + image.message + ")");
    bytes.resize(size);
    png_image_free(&image);
    write_file_atomically(path, bytes);
}

}  // namespace hp::png
