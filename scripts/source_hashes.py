#!/usr/bin/env python3
"""The hash of the sources a results row measured: what makes a committed figure checkable.

A stage's sources are its chapter's files, kernels/NN_*, the file under dispatch/ that
defines its launcher where the dispatch layer chooses its plan (void launch_<chapter's
name>(, as dispatch/fp8_tiles.cpp defines stage 31's launch_fp8_any_tile), and every file
under kernels/ and dispatch/ they include, followed through includes; a track's are dispatch/<track>.cpp
(fp32-tc: fp32_tc.cpp) and what it includes. Where an included header has an
implementation beside it (kernels/20_hopper_tuned.hpp and .cu, dispatch/bf16_cost.hpp and
.cpp, kernels/common/padded_launch.cuh and .cu), that is followed too: a track's sources
hold the kernels it chooses among. Files outside kernels/ and dispatch/ (the driver, the
verification, cuBLAS's plumbing) are not a stage's sources.

The hash is of the code, not of its text: comments are dropped and whitespace that
separates no two words, so rewording a chapter's opening, or regenerating the figures
it quotes (scripts/worklog.py), leaves its rows current. Stage 0 is cuBLAS: no sources of
the project's, the hash of nothing.

The build embeds these hashes in the binary (--cpp, from CMakeLists.txt), which writes
its own stage's into every row (the `sources` column); scripts/check_results.py compares
a committed row's with the tree's.

    python3 scripts/source_hashes.py [--commit REV] [LABEL ...]   # print "label hash" lines
    python3 scripts/source_hashes.py --cpp OUT.cpp                 # the table the binary embeds
"""

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# The folders whose files are a stage's sources; includes are looked up as the build does
# (CMakeLists.txt: the including file's folder, then the root, src/ and kernels/).
SOURCE_FOLDERS = ("kernels/", "dispatch/")
INCLUDE_FOLDERS = ("", "src/", "kernels/")
IMPLEMENTATIONS = (".cu", ".cpp")
HASH_LENGTH = 12
CHAPTER_FILE = re.compile(r"kernels/(\d\d)_[^/]+$")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


class WorkingTree:
    """The files of a checkout."""

    def __init__(self, root=REPO_ROOT):
        self.root = Path(root)

    def files(self):
        return sorted(str(path.relative_to(self.root)) for folder in SOURCE_FOLDERS
                      for path in (self.root / folder).rglob("*") if path.is_file())

    def read(self, path):
        return (self.root / path).read_text(encoding="utf-8")


class CommitTree:
    """The files of a commit, read through git."""

    def __init__(self, commit, root=REPO_ROOT):
        self.commit, self.root = commit, Path(root)
        listing = self._git("ls-tree", "-r", "--name-only", commit, "--", *SOURCE_FOLDERS)
        self._files = sorted(listing.splitlines())
        self._texts = {}

    def _git(self, *args):
        return subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True,
                              text=True).stdout

    def files(self):
        return self._files

    def read(self, path):
        if path not in self._texts:
            self._texts[path] = self._git("show", f"{self.commit}:{path}")
        return self._texts[path]


def code_of(text):
    """The code of a C++ or CUDA file: comments dropped, each run of whitespace kept only as
    one space between two word characters (identifiers, numbers, keywords); string and
    character literals as written."""
    out = []
    i, n = 0, len(text)
    pending_space = False
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            pending_space = True
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            pending_space = True
            continue
        if ch.isspace():
            pending_space = True
            i += 1
            continue
        if ch in "\"'" and not (ch == "'" and out and (out[-1][-1:].isalnum())):
            end = i + 1
            while end < n and text[end] != ch:
                end += 2 if text[end] == "\\" else 1
            token = text[i:end + 1]
            i = end + 1
        else:
            token = ch
            i += 1
        if pending_space and out and _word_char(out[-1][-1]) and _word_char(token[0]):
            out.append(" ")
        pending_space = False
        out.append(token)
    return "".join(out)


def _word_char(ch):
    return ch.isalnum() or ch == "_"


def _resolve(include, including_file, files):
    """The path under SOURCE_FOLDERS that `#include "include"` in `including_file` names,
    or None (a file outside them, or a system header)."""
    folder = str(Path(including_file).parent)
    for base in (folder + "/", *INCLUDE_FOLDERS):
        candidate = str(Path(base + include))  # normalises "a/../b" and "./"
        if candidate in files:
            return candidate if candidate.startswith(SOURCE_FOLDERS) else None
    return None


def closure(roots, tree):
    """The roots and every file under SOURCE_FOLDERS they include, with the implementation
    beside each included header, sorted."""
    files = set(tree.files())
    seen, todo = set(), [root for root in roots if root in files]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for include in INCLUDE.findall(tree.read(path)):
            resolved = _resolve(include, path, files)
            if resolved is None:
                continue
            todo.append(resolved)
            stem = str(Path(resolved).with_suffix(""))
            todo.extend(stem + suffix for suffix in IMPLEMENTATIONS if stem + suffix in files)
    return sorted(seen)


def roots_of(label, tree):
    """The files a stage (label "20") or a track (label "bf16") starts from; [] for stage 0."""
    if label.isdigit():
        number = int(label)
        chapter = [path for path in tree.files()
                   if (match := CHAPTER_FILE.match(path)) and int(match.group(1)) == number]
        names = {Path(path).stem[3:] for path in chapter}
        launchers = [path for path in tree.files() if path.startswith("dispatch/") and path.endswith(".cpp")
                     and any(re.search(rf"\bvoid\s+launch_{name}\s*\(", tree.read(path)) for name in names)]
        return chapter + launchers
    return [f"dispatch/{label.replace('-', '_')}.cpp"]


def sources_hash(label, tree):
    """The hash of the code of `label`'s sources in `tree`."""
    digest = hashlib.sha256()
    for path in closure(roots_of(label, tree), tree):
        digest.update(path.encode() + b"\0" + code_of(tree.read(path)).encode() + b"\0")
    return digest.hexdigest()[:HASH_LENGTH]


def measured_elsewhere(recorded, tree):
    """[(label, recorded hash, the tree's hash)] of the (label, hash) pairs in `recorded` whose
    hash is not the tree's for that label: times of a kernel that has changed since they were
    taken (the fits refuse them, scripts/fit_fp32_model.py)."""
    now = {label: sources_hash(label, tree) for label, _ in set(recorded)}
    return sorted((label, hash_, now[label]) for label, hash_ in set(recorded) if hash_ != now[label])


def refuse_times_measured_elsewhere(times, what):
    """Exit naming the times ((label, hash) pairs, one a timed row) that measured other sources
    than this tree's; note those whose hash is "" (files from before rows named their sources)."""
    stale = measured_elsewhere([time for time in times if time[1]], WorkingTree())
    unrecorded = sum(not hash_ for _, hash_ in times)
    if stale:
        sys.exit(f"{what}: times of sources this tree no longer has: " +
                 "; ".join(f"stage {label} measured on {then}, now {now}" for label, then, now in stale) +
                 ". Time them again (sgemm_model --time), or pass --stale-ok to fit on them anyway.")
    if unrecorded:
        print(f"{what}: {unrecorded} timed rows name no sources (written before sgemm_model named them)")


def labels(tree):
    """Every stage (0 and each chapter's number) and track the tree holds."""
    stages = {int(match.group(1)) for path in tree.files() if (match := CHAPTER_FILE.match(path))}
    # A track's file defines its launcher, launch_<name>_track (dispatch/fp32_tc.cpp: fp32-tc).
    tracks = [stem.replace("_", "-") for path in tree.files() if path.startswith("dispatch/") and path.endswith(".cpp")
              and f"launch_{(stem := path[len('dispatch/'):-len('.cpp')])}_track" in tree.read(path)]
    return [str(number) for number in sorted({0, *stages})] + sorted(tracks)


def cpp_table(tree):
    """C++ source defining sgemm::sources_hash(label) (src/driver/source_hashes.hpp)."""
    entries = "\n".join(f'    {{"{label}", "{sources_hash(label, tree)}"}},' for label in labels(tree))
    return (
        "// Generated by scripts/source_hashes.py --cpp at build time: do not edit.\n"
        '#include "driver/source_hashes.hpp"\n\n'
        "#include <array>\n#include <utility>\n\n"
        "namespace sgemm {\n\n"
        "std::string_view sources_hash(std::string_view label) {\n"
        "    static constexpr std::pair<std::string_view, std::string_view> kHashes[] = {\n"
        f"{entries}\n"
        "    };\n"
        "    for (const auto& [known, hash] : kHashes)\n"
        "        if (known == label) return hash;\n"
        '    return "";\n'
        "}\n\n"
        "}  // namespace sgemm\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", nargs="*", help="stages (20) or tracks (bf16); default: all")
    parser.add_argument("--commit", help="hash the sources of this commit, not the working tree")
    parser.add_argument("--cpp", metavar="OUT", help="write the C++ table the binary embeds")
    args = parser.parse_args(argv)
    tree = CommitTree(args.commit) if args.commit else WorkingTree()
    if args.cpp:
        text = cpp_table(tree)
        out = Path(args.cpp)
        if not out.exists() or out.read_text(encoding="utf-8") != text:  # keep the build's timestamps
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        return 0
    for label in args.labels or labels(tree):
        print(label, sources_hash(label, tree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
