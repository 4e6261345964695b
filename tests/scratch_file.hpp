// A file in the temporary directory for a test to have written: named after the test
// process (so that parallel ctest jobs never share one), removed before the test uses
// it and when it goes out of scope, whatever the test's outcome.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace sgemm {

class ScratchFile {
public:
    explicit ScratchFile(const std::string& name)
        : path_(std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)) {
        std::filesystem::remove(path_);
    }
    ~ScratchFile() { std::filesystem::remove(path_); }
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace sgemm
