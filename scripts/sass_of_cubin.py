#!/usr/bin/env python3
"""The SASS of a cubin's kernels on a machine without cuobjdump: each kernel's code, read from
its ELF section (.text.<kernel>), disassembled by `nvdisasm --binary SM90` as raw instructions.
Any nvdisasm that knows the SM will do: CUDA 11.8's (Debian's non-free nvidia-cuda-toolkit)
reads what CUDA 13's ptxas writes, though its cuobjdump refuses CUDA 13's cubins. Each listing
starts with a `Function :` line, as cuobjdump's do, for scripts/sass_loop.py.

    nvcc --options-file build/CMakeFiles/sgemm_core.dir/includes_CUDA.rsp -O3 -DNDEBUG \\
         -arch=sm_90a --expt-relaxed-constexpr -std=c++17 -cubin -x cu kernels/10_tuned.cu -o t.cubin
    python3 scripts/sass_of_cubin.py t.cubin --kernel 'TileConfigILi128ELi128E.*EdgeTestsE0' --out sass/
    python3 scripts/sass_loop.py sass/0.sass

Writes OUT/<i>.sass for the i-th kernel whose name matches --kernel and prints "i name".
"""
import argparse
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

TEXT_PREFIX = ".text."
SHT_NOBITS = 8


def text_sections(elf):
    """{kernel name: its code} of an ELF64 little-endian image (a cubin's bytes)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    section_headers = struct.unpack_from("<Q", elf, 0x28)[0]
    header_size, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, section_headers + i * header_size) for i in range(count)]
    names_offset = headers[names_index][4]

    def name(offset):
        start = names_offset + offset
        return elf[start:elf.index(b"\0", start)].decode()

    sections = {}
    for name_offset, kind, _, _, offset, size, *_ in headers:
        section = name(name_offset)
        if section.startswith(TEXT_PREFIX) and kind != SHT_NOBITS:
            sections[section[len(TEXT_PREFIX):]] = elf[offset:offset + size]
    return sections


def disassemble(code, nvdisasm, sm):
    with tempfile.NamedTemporaryFile(suffix=".bin") as raw:
        raw.write(code)
        raw.flush()
        return subprocess.run([nvdisasm, "--binary", sm, raw.name], check=True, capture_output=True, text=True).stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cubin", type=Path)
    parser.add_argument("--kernel", default="", help="a regular expression the kernels' (mangled) names match")
    parser.add_argument("--out", type=Path, required=True, help="where <i>.sass go")
    parser.add_argument("--nvdisasm", default=shutil.which("nvdisasm") or "nvdisasm")
    parser.add_argument("--sm", default="SM90", help="the instruction set, as nvdisasm --binary names it")
    args = parser.parse_args(argv)
    pattern = re.compile(args.kernel)
    kernels = [(name, code) for name, code in text_sections(args.cubin.read_bytes()).items() if pattern.search(name)]
    if not kernels:
        sys.exit(f"no kernel of {args.cubin} matches {args.kernel!r}")
    args.out.mkdir(parents=True, exist_ok=True)
    for i, (name, code) in enumerate(kernels):
        (args.out / f"{i}.sass").write_text(f"\tFunction : {name}\n" + disassemble(code, args.nvdisasm, args.sm))
        print(i, name)


if __name__ == "__main__":
    main()
