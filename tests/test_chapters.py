"""A chapter depends only on earlier ones: kernels/NN_*.cu and the files named after it
include only earlier chapters' files (and kernels/common/), never the dispatch layer or the
driver; no chapter calls another stage's launcher (those its kernels/MM_*.hpp declares);
no header opens an anonymous namespace."""
import re
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "kernels"
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
CHAPTER_FILE = re.compile(r"(\d\d)_\w+\.(cu|cuh|hpp)")


def chapter_of(path):
    match = CHAPTER_FILE.fullmatch(path.name)
    return int(match.group(1)) if match and path.parent == KERNELS else None


def resolve(include, including):
    for base in (including.parent, KERNELS, REPO, REPO / "src"):
        if (base / include).exists():
            return (base / include).resolve()
    return None


def closure(path):
    """Every file `path` includes, directly or not, that lies in the repository."""
    seen, todo = set(), [path.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo += [found for include in INCLUDE.findall(current.read_text())
                 if (found := resolve(include, current)) is not None]
    return seen


def launchers_declared(hpp):
    return set(re.findall(r"^\w[\w:<>*& ]*\s(\w+)\(", hpp.read_text(), re.M))


class ChaptersDependOnlyOnEarlierOnes(unittest.TestCase):
    def chapter_files(self):
        return sorted(path for path in KERNELS.iterdir() if chapter_of(path) is not None)

    def test_includes_reach_only_earlier_chapters_and_common(self):
        for path in self.chapter_files():
            number = chapter_of(path)
            for included in closure(path):
                with self.subTest(chapter=path.name, includes=included.name):
                    relative = included.relative_to(REPO)
                    self.assertFalse(relative.parts[0] in ("dispatch", "src"), f"{path.name} includes {relative}")
                    other = chapter_of(included)
                    if other is not None:
                        self.assertLessEqual(other, number, f"{path.name} includes a later chapter's {included.name}")

    def test_no_chapter_calls_another_stages_launcher(self):
        declared = {hpp: launchers_declared(hpp) for hpp in KERNELS.glob("[0-9][0-9]_*.hpp")}
        self.assertTrue(all(declared.values()), "every chapter header declares a launcher")
        for path in self.chapter_files():
            text = path.read_text()
            for hpp, names in declared.items():
                if chapter_of(hpp) == chapter_of(path):
                    continue
                for name in names:
                    with self.subTest(chapter=path.name, launcher=name):
                        self.assertIsNone(re.search(rf"\b{name}\s*\(", text),
                                          f"{path.name} calls stage {chapter_of(hpp)}'s launcher {name}")

    def test_headers_open_no_anonymous_namespace(self):
        for header in sorted(list(KERNELS.rglob("*.cuh")) + list(KERNELS.rglob("*.hpp")) +
                             list((REPO / "dispatch").glob("*.hpp"))):
            with self.subTest(header=header.name):
                self.assertNotRegex(header.read_text(), r"namespace\s*\{")

    def test_the_check_sees_a_later_chapters_include(self):
        later = KERNELS / "24_a_in_registers.hpp"
        self.assertIn(later.resolve(), closure(KERNELS / "24_a_in_registers.cu"))
        self.assertNotIn(later.resolve(), closure(KERNELS / "10_tuned.cu"))
        self.assertIn("launch_a_in_registers", launchers_declared(later))


if __name__ == "__main__":
    unittest.main()
