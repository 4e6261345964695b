// The hash of the sources a stage's or a track's row measured (scripts/source_hashes.py: its
// chapter's files and the kernels/ and dispatch/ files they include, comments aside), made
// at build time from the tree the binary was built from. Every results row carries it (the
// CSV's `sources` column), so that scripts/check_results.py can tell a committed figure
// whose kernel has changed since.
#pragma once

#include <string_view>

namespace sgemm {

// `label` as a row's stage column names it: "20", "bf16"; "" for one the build did not hash.
std::string_view sources_hash(std::string_view label);

}  // namespace sgemm
