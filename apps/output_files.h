#pragma once
// What the commands write, all or nothing. Outputs are registered (and checked) before any
// work, written under temporary names in their target's folder, and renamed into place only
// when every one of them was written; a failure anywhere removes the temporaries, so the
// file system is left as it was.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tvlm {

class OutputFiles {
public:
    OutputFiles() = default;
    OutputFiles(const OutputFiles&) = delete;
    OutputFiles& operator=(const OutputFiles&) = delete;
    ~OutputFiles();  // removes whatever was not committed

    // Registers a file output and returns the temporary path to write it to. Throws Error,
    // having written nothing, for an empty path, a path that exists and is not a regular
    // file (a folder, a device), a missing folder, or a file another output already names.
    std::string file(const std::string& path, const std::string& what);
    // Registers a folder output (tvlm mips) and returns the temporary folder to fill. An
    // existing folder is replaced whole at commit(), so it never holds files of two runs;
    // it must hold nothing but what `is_ours` accepts (an earlier run's files), else Error.
    std::string folder(const std::string& path, const std::string& what, bool (*is_ours)(const std::string& name));

    // Renames every output into place (a replaced folder is removed after its successor
    // is in place). Throws Error if a rename fails; outputs not yet renamed are removed.
    void commit();

private:
    struct Output {
        std::filesystem::path target, temporary;
        bool is_folder = false;
    };
    std::filesystem::path temporary_beside(const std::filesystem::path& target) const;
    void check_distinct(const std::filesystem::path& target, const std::string& what) const;
    std::vector<Output> outputs_;
    bool committed_ = false;
};

// From the call on, SIGINT, SIGTERM and SIGHUP (those not ignored when the process started)
// remove the temporaries of every OutputFiles alive and then end the process as the signal
// would have (so an interrupted run leaves the file system as it was). Call it first in main(), before any thread starts: it blocks those
// signals in the calling thread, which every later thread inherits, and waits for them on a
// thread of its own, where removing files is safe.
void remove_temporaries_on_signals();

// `message` with the temporary paths of outputs that were removed after a failure named as
// the user gave them: an error met while writing names the user's path, not ours.
std::string with_output_names(std::string message);

// A NumPy .npy (format 1.0, little-endian float32, C order) of `shape`.
void write_npy(const std::string& path, const std::vector<size_t>& shape, const std::vector<float>& values);
// Text written to `path`.
void write_text(const std::string& path, const std::string& text);

}  // namespace tvlm
