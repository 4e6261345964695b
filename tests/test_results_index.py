"""Every file under results/ is named where a reader looks: in an index (a README.md in its
folder or in one above it, inside results/), the top-level README.md, docs/**/*.md or
WORKLOG.md; and none of those names a file under results/ that is not there.

A document names a file by a Markdown link that resolves to it, relative to the document as
GitHub resolves it, or by its path from the repository root written out (in a code span,
say); a file's name alone names nothing, so that draw_5.md at two places is told apart. A
folder, linked or written out, names its README.md, which GitHub shows there."""
import re
import tempfile
import unittest
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parent.parent
# The target of an inline link, [text](target "title"), or of a reference, [label]: target.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]]+\]:\s*<?([^\s>]+)", re.M)
# A path from the repository root written out: results/ and what follows, to the first space,
# quote, bracket or backquote; not the tail of a longer path (../results/ is a link's).
WRITTEN_PATH = re.compile(r"(?<![\w./-])results/[^\s`'\"()\[\]|]*")
# A written path that stands for many (results/<gpu>/draw_<seed>.md, tuning_stage*.md) names none.
PATTERN = re.compile(r"[<>*{}]")


def documents(root):
    """The documents that may name a results file: README.md, WORKLOG.md, docs/**/*.md, and
    the indexes, results/**/README.md."""
    found = [root / "README.md", root / "WORKLOG.md", *(root / "docs").rglob("*.md"),
             *(root / "results").rglob("README.md")]
    return sorted(path for path in found if path.is_file())


def named_paths(document, root):
    """The paths under root/results that `document` names (links resolved, folders as they
    are), each once."""
    text = document.read_text(encoding="utf-8")
    named = set()
    for match in LINK.finditer(text):
        target = unquote((match.group(1) or match.group(2)).split("#")[0].split("?")[0])
        if not target or re.match(r"[a-z][a-z+.-]*:", target):  # an anchor, or http:, mailto: ...
            continue
        base = root if target.startswith("/") else document.parent
        named.add((base / target.lstrip("/")).resolve())
    for match in WRITTEN_PATH.finditer(text):
        written = match.group(0).rstrip(".,;:")
        if not PATTERN.search(written):
            named.add((root / written).resolve())
    results = (root / "results").resolve()
    return {path for path in named if path == results or results in path.parents}


def check(root):
    """(unnamed, dead): the files under root/results that no document names, relative to
    root; and each name of a missing file as "document: path"."""
    root = root.resolve()
    results = root / "results"
    named, dead = set(), []
    for document in documents(root):
        # An index names what lies in its own folder and below; any other document, anything.
        scope = document.parent if results in document.parents else results
        for path in sorted(named_paths(document, root)):
            if not path.exists():
                dead.append(f"{document.relative_to(root)}: {path.relative_to(root)}")
                continue
            if path.is_dir():
                path = path / "README.md"
            if scope == path.parent or scope in path.parents:
                named.add(path)
    unnamed = [str(path.relative_to(root)) for path in sorted(results.rglob("*"))
               if path.is_file() and path not in named]
    return unnamed, dead


class ResultsIndex(unittest.TestCase):
    def test_every_results_file_is_named_in_an_index_a_readme_a_doc_or_the_worklog(self):
        unnamed, _ = check(REPO)
        self.assertEqual(unnamed, [], "named nowhere: link each from the note that uses it, "
                                      "or from its folder's README.md")

    def test_no_document_names_a_results_file_that_is_not_there(self):
        _, dead = check(REPO)
        self.assertEqual(dead, [], "dead names of results files")


class TheCheckItself(unittest.TestCase):
    """check() on made-up trees: it reports what it should, so that the tests above can fail."""

    def tree(self, files):
        """A repository holding `files` ({path: text}); it is removed after the test."""
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        root = Path(scratch.name)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        return root

    def test_an_unnamed_file_and_a_dead_link_are_reported(self):
        root = self.tree({
            "README.md": "[The GPU's results](results/gpu/)\n",
            "results/gpu/README.md": "- [draw_8.md](draw_8.md)\n- [gone.csv](gone.csv)\n",
            "results/gpu/draw_8.md": "",
            "results/gpu/unnamed.csv": "",
        })
        unnamed, dead = check(root)
        self.assertEqual(unnamed, ["results/gpu/unnamed.csv"])
        self.assertEqual(dead, ["results/gpu/README.md: results/gpu/gone.csv"])

    def test_links_resolve_from_their_document_so_one_name_at_two_places_is_two_files(self):
        root = self.tree({
            "docs/notes/10.md": "The first version ([`draw_5.md`](../../results/gpu/experiments/first/draw_5.md)); "
                                "the draw itself, `draw_5.md`.\n",
            "results/gpu/draw_5.md": "",
            "results/gpu/experiments/first/draw_5.md": "",
        })
        unnamed, dead = check(root)
        self.assertEqual(unnamed, ["results/gpu/draw_5.md"])
        self.assertEqual(dead, [])

    def test_a_path_written_out_names_its_file_and_a_pattern_names_none(self):
        root = self.tree({
            "WORKLOG.md": "The fit (`results/gpu/fit.md`), the report `results/gpu/gone.md`.\n",
            "docs/tools.md": "It writes `results/<gpu>/draw_<seed>.md` and results/gpu/tuning_stage*.md.\n",
            "results/gpu/fit.md": "",
            "results/gpu/tuning_stage10.md": "",
        })
        unnamed, dead = check(root)
        self.assertEqual(unnamed, ["results/gpu/tuning_stage10.md"])
        self.assertEqual(dead, ["WORKLOG.md: results/gpu/gone.md"])

    def test_an_index_names_only_what_lies_below_it(self):
        root = self.tree({
            "results/one/README.md": "[The other GPU's run](../two/run.csv)\n",
            "results/two/README.md": "",
            "results/two/run.csv": "",
        })
        unnamed, _ = check(root)
        self.assertEqual(unnamed, ["results/one/README.md", "results/two/README.md", "results/two/run.csv"])


if __name__ == "__main__":
    unittest.main()
