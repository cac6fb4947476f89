#include "apps/output_files.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "engine/error.h"

namespace tvlm {

namespace fs = std::filesystem;

namespace {

// Where `path` resolves to, for telling two outputs apart (a file need not exist).
fs::path identity(const fs::path& path) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(path), ec);
    return ec ? fs::absolute(path).lexically_normal() : resolved;
}

void write_whole(const std::string& path, const std::string& header, const void* data, size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + path + "': check that its folder exists and is writable");
    out.write(header.data(), std::streamsize(header.size()));
    out.write(static_cast<const char*>(data), std::streamsize(bytes));
    out.close();
    if (!out) throw Error("writing '" + path + "' failed (disk full?)");
}

// Every temporary not yet in place, for the signal thread. Its lock also spans a commit's
// renames, so a signal waits for them and then finds only what was not renamed.
struct Temporaries {
    std::mutex mutex;
    std::set<fs::path> paths;
};
Temporaries& temporaries() {
    static Temporaries t;
    return t;
}

void forget_temporary(const fs::path& path) {
    const std::lock_guard<std::mutex> lock(temporaries().mutex);
    temporaries().paths.erase(path);
}

}  // namespace

void remove_temporaries_on_signals() {
    sigset_t signals;
    sigemptyset(&signals);
    for (const int s : {SIGINT, SIGTERM, SIGHUP}) {
        // A signal the parent set to be ignored stays ignored (nohup's SIGHUP, SIGINT of a
        // script's background job): watching it would end a run its caller meant to keep.
        struct sigaction current {};
        if (sigaction(s, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&signals, s);
    }
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread([signals] {
        int received = 0;
        if (sigwait(&signals, &received) != 0) return;
        {
            const std::lock_guard<std::mutex> lock(temporaries().mutex);
            std::error_code ec;
            for (const fs::path& p : temporaries().paths) fs::remove_all(p, ec);
            temporaries().paths.clear();
        }
        // End as the signal would have: its default action, delivered to this thread.
        std::signal(received, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, received);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        std::raise(received);
    }).detach();
}

// Temporary -> given path of the outputs removed after a failure (with_output_names).
std::vector<std::pair<std::string, std::string>>& removed_outputs() {
    static std::vector<std::pair<std::string, std::string>> names;
    return names;
}

std::string with_output_names(std::string message) {
    for (const auto& [temporary, given] : removed_outputs())
        for (size_t at = message.find(temporary); at != std::string::npos; at = message.find(temporary, at))
            message.replace(at, temporary.size(), given);
    return message;
}

OutputFiles::~OutputFiles() {
    std::error_code ec;  // nothing to report to: the failure that got us here is on its way
    for (const Output& o : outputs_) {
        if (o.temporary.empty()) continue;  // in place
        if (!committed_) {
            fs::remove_all(o.temporary, ec);
            removed_outputs().emplace_back(o.temporary.string(), o.target.string());
        }
        forget_temporary(o.temporary);
    }
}

fs::path OutputFiles::temporary_beside(const fs::path& target) const {
    static unsigned serial = 0;
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    return folder / ("." + target.filename().string() + ".tvlm-" + std::to_string(::getpid()) + "-" +
                     std::to_string(serial++) + ".partial");
}

void OutputFiles::check_distinct(const fs::path& target, const std::string& what) const {
    for (const Output& o : outputs_)
        if (identity(o.target) == identity(target))
            throw Error(what + " '" + target.string() +
                        "' is also where another output goes: give each output its own path");
}

std::string OutputFiles::file(const std::string& path, const std::string& what) {
    if (path.empty()) throw Error(what + " is an empty path: name a file");
    const fs::path target(path);
    std::error_code ec;
    const fs::file_status status = fs::status(target, ec);
    if (fs::exists(status) && !fs::is_regular_file(status))
        throw Error(what + " '" + path + "' exists and is not a regular file (" +
                    (fs::is_directory(status) ? "a folder" : "a device, pipe or socket") + "): name a file");
    if (target.filename().empty()) throw Error(what + " '" + path + "' names a folder: name a file");
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(folder, ec))
        throw Error("the folder of " + what + " '" + path + "' does not exist: create it first");
    check_distinct(target, what);
    outputs_.push_back({target, temporary_beside(target), false});
    {
        const std::lock_guard<std::mutex> lock(temporaries().mutex);
        temporaries().paths.insert(outputs_.back().temporary);
    }
    return outputs_.back().temporary.string();
}

std::string OutputFiles::folder(const std::string& path, const std::string& what, bool (*is_ours)(const std::string&)) {
    if (path.empty()) throw Error(what + " is an empty path: name a folder");
    const fs::path target = fs::path(path).lexically_normal();
    std::error_code ec;
    const fs::file_status status = fs::status(target, ec);
    if (fs::exists(status)) {
        if (!fs::is_directory(status)) throw Error(what + " '" + path + "' exists and is not a folder: name a folder");
        for (const auto& entry : fs::directory_iterator(target, ec))
            if (!entry.is_regular_file() || !is_ours(entry.path().filename().string()))
                throw Error(what + " '" + path + "' holds '" + entry.path().filename().string() +
                            "', which tvlm did not write: name a new or empty folder");
    }
    check_distinct(target, what);
    const fs::path temporary = temporary_beside(target.filename().empty() ? target.parent_path() : target);
    {
        const std::lock_guard<std::mutex> lock(temporaries().mutex);
        temporaries().paths.insert(temporary);
    }
    fs::create_directories(temporary, ec);
    outputs_.push_back({target, temporary, true});  // registered first: a failure below removes it
    if (ec) throw Error("cannot create " + what + " '" + path + "': " + ec.message());
    return temporary.string();
}

void OutputFiles::commit() {
    const std::lock_guard<std::mutex> lock(temporaries().mutex);  // a signal waits for the renames
    for (size_t i = 0; i < outputs_.size(); ++i) {
        Output& o = outputs_[i];
        std::error_code ec;
        fs::path replaced;
        if (o.is_folder && fs::exists(o.target, ec)) {  // move the old run aside, then swap
            replaced = temporary_beside(o.target);
            fs::rename(o.target, replaced, ec);
        }
        if (!ec) fs::rename(o.temporary, o.target, ec);
        if (ec) {
            std::error_code ignored;
            if (!replaced.empty() && !fs::exists(o.target, ignored)) fs::rename(replaced, o.target, ignored);
            throw Error("cannot put '" + o.target.string() + "' in place: " + ec.message());
        }
        temporaries().paths.erase(o.temporary);
        o.temporary.clear();  // in place: not ours to remove any more
        if (!replaced.empty()) fs::remove_all(replaced, ec);
    }
    committed_ = true;
}

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
    write_whole(path, file, values.data(), values.size() * sizeof(float));
}

void write_text(const std::string& path, const std::string& text) { write_whole(path, text, nullptr, 0); }

}  // namespace tvlm
