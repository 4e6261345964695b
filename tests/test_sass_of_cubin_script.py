"""scripts/sass_of_cubin.py: each kernel's code is its .text.<kernel> section of the ELF, and
the listings written are nvdisasm's on exactly those bytes, each under a `Function :` line that
scripts/sass_loop.py reads as the function's start."""
import struct
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import sass_loop  # noqa: E402
import sass_of_cubin  # noqa: E402


def elf_with(sections):
    """An ELF64 little-endian image whose sections are a null one, [(name, type, bytes)], then
    the section names."""
    names = b"\0"
    offsets = []
    for name, _, _ in sections + [(".shstrtab", 3, b"")]:
        offsets.append(len(names))
        names += name.encode() + b"\0"
    body = b""
    placed = []
    for (_, _, data) in sections:
        placed.append((64 + len(body), len(data)))
        body += data
    placed.append((64 + len(body), len(names)))
    body += names
    section_headers = 64 + len(body)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, section_headers)
    struct.pack_into("<HHH", header, 0x3A, 64, len(sections) + 2, len(sections) + 1)
    table = bytes(64)  # the null section
    kinds = [kind for _, kind, _ in sections] + [3]
    for name_offset, kind, (offset, size) in zip(offsets, kinds, placed):
        table += struct.pack("<IIQQQQIIQQ", name_offset, kind, 0, 0, offset, size, 0, 0, 1, 0)
    return bytes(header) + body + table


FAKE_NVDISASM = """#!/usr/bin/env python3
import sys
code = open(sys.argv[-1], 'rb').read()
assert sys.argv[1:3] == ['--binary', 'SM90'], sys.argv
for i in range(0, len(code), 16):
    print(f"        /*{i:04x}*/                   MOV R{code[i]}, R{code[i + 1]} ;")
print(f"        /*{len(code):04x}*/                   BRA 0x0 ;")
"""


class SassOfCubinTest(unittest.TestCase):
    def setUp(self):
        self.first = bytes([1, 2] + [0] * 14 + [3, 4] + [0] * 14)
        self.second = bytes([5, 6] + [0] * 14)
        self.elf = elf_with([(".text.kernel_one", 1, self.first), (".nv.info", 0x70000000, b"info"),
                             (".text.kernel_two", 1, self.second), (".nv.shared.kernel_one", 8, b"")])

    def test_each_kernels_code_is_its_text_section(self):
        self.assertEqual(sass_of_cubin.text_sections(self.elf), {"kernel_one": self.first, "kernel_two": self.second})

    def test_refuses_what_is_not_elf64(self):
        with self.assertRaises(ValueError):
            sass_of_cubin.text_sections(b"\x7fELF\x01\x01" + bytes(64))

    def test_listings_of_the_matching_kernels_for_sass_loop(self):
        with tempfile.TemporaryDirectory() as scratch:
            scratch = Path(scratch)
            (scratch / "k.cubin").write_bytes(self.elf)
            fake = scratch / "nvdisasm"
            fake.write_text(FAKE_NVDISASM)
            fake.chmod(0o755)
            sass_of_cubin.main([str(scratch / "k.cubin"), "--kernel", "two", "--out", str(scratch / "sass"),
                                "--nvdisasm", str(fake)])
            written = sorted(path.name for path in (scratch / "sass").iterdir())
            self.assertEqual(written, ["0.sass"])
            listing = (scratch / "sass" / "0.sass").read_text()
            self.assertTrue(listing.startswith("\tFunction : kernel_two\n"))
            self.assertEqual(sass_loop.first_function(listing), [(0x0, "MOV R5, R6"), (0x10, "BRA 0x0")])


if __name__ == "__main__":
    unittest.main()
