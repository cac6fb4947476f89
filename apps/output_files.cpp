#include "output_files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "error.h"

namespace tvlm {

namespace {

void write_atomically(const std::string& path, const std::string& header, const void* data, size_t bytes) {
    const std::string partial = path + ".partial";
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out) throw Error("cannot write '" + path + "': check that its folder exists and is writable");
        out.write(header.data(), std::streamsize(header.size()));
        out.write(static_cast<const char*>(data), std::streamsize(bytes));
        if (!out) throw Error("writing '" + path + "' failed (disk full?)");
    }
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);
    if (ec) throw Error("cannot write '" + path + "': " + ec.message());
}

}  // namespace

void write_npy(const std::string& path, const std::vector<size_t>& shape, const std::vector<float>& values) {
    std::string dims;
    for (size_t d : shape) dims += std::to_string(d) + ", ";
    dims.resize(dims.size() - (shape.size() > 1 ? 2 : 1));  // "(2, 3)", and "(5,)" for one dimension
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    // Magic, version 1.0, header length; the header is padded with spaces to a multiple of
    // 64 bytes (including the 10-byte preamble) and ends in a newline.
    const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
    header.append(total - 10 - header.size() - 1, ' ');
    header += '\n';
    const auto length = uint16_t(header.size());
    std::string file = "\x93NUMPY";
    file += char(1);
    file += char(0);
    file += char(length & 0xff);
    file += char(length >> 8);
    file += header;
    write_atomically(path, file, values.data(), values.size() * sizeof(float));
}

void write_text(const std::string& path, const std::string& text) { write_atomically(path, text, nullptr, 0); }

}  // namespace tvlm
