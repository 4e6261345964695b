#!/usr/bin/env python3
"""The main loop of a kernel in `cuobjdump -sass` output: its instruction mix, and how its FFMAs
name their registers (reuse flags, accumulators updated in place, register-bank conflicts), to
set one kernel's schedule beside another's (stage 10's beside cuBLAS SGEMM's, and stage 10 in two
orders of its FMAs: docs/notes/10_tuned.md).

Bank conflicts as microbenchmarks found them on Volta and later (Jia et al., "Dissecting the
NVIDIA Volta GPU Architecture via Microbenchmarking", 2018): the register file in two banks,
register r in bank r % 2, one read a bank a cycle; an operand the instruction before flagged
.reuse in the same slot comes from the reuse cache instead. An FFMA that reads two registers of
one bank from the file waits a cycle. Hopper's banks are not documented; the count is a model.

    cuobjdump -sass -fun KERNEL ./sgemm > stage10.sass       # on the GPU machine
    python3 scripts/sass_loop.py stage10.sass cublas.sass [--body DIR]

The main loop is the longest backward branch of the first function in each file. --body writes
each loop's instructions to DIR/<file>.loop.txt.
"""
import argparse
import collections
import re
import sys
from pathlib import Path

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"BRA\s+0x([0-9a-f]+)")
FFMA = re.compile(r"(?:@!?P\d\s+)?FFMA\s+R(\d+),\s+-?R(\d+)(\.reuse)?,\s+-?R(\d+)(\.reuse)?,\s+-?R(\d+)(\.reuse)?")


def first_function(text):
    """[(address, instruction)] of the first function in the listing."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if "Function :" in line]
    if not starts:
        raise ValueError("no function in the listing")
    end = starts[1] if len(starts) > 1 else len(lines)
    return [(int(m.group(1), 16), m.group(2)) for m in map(INSTRUCTION.match, lines[starts[0]:end]) if m]


def main_loop(instructions):
    """The instructions from the target of the longest backward branch to the branch."""
    at = {address: i for i, (address, _) in enumerate(instructions)}
    loops = []
    for i, (address, text) in enumerate(instructions):
        m = BRANCH.search(text)
        if m and int(m.group(1), 16) < address and int(m.group(1), 16) in at:
            loops.append([t for _, t in instructions[at[int(m.group(1), 16)]:i + 1]])
    if not loops:
        raise ValueError("no loop in the function")
    return max(loops, key=len)


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


LOAD = re.compile(r"(?:@!?P\d\s+)?LDS(?:\.(\d+))?\s+R(\d+),")


def load_distances(body):
    """For each shared-memory load, the instructions from it to the first that reads a register
    it writes (within the loop's body, in order): how much other work covers its latency."""
    distances = []
    for i, text in enumerate(body):
        m = LOAD.match(text)
        if not m:
            continue
        written = {f"R{int(m.group(2)) + j}" for j in range(int(m.group(1) or 32) // 32)}
        for j in range(i + 1, len(body)):
            sources = body[j].split(",")[1:]
            if any(re.search(rf"\b{r}\b", source) for source in sources for r in written):
                distances.append(j - i)
                break
    return sorted(distances)


def bank_conflicts(body):
    """The FFMAs that read two or more distinct registers of one bank from the register file (the
    model above), and those that read three."""
    two = three = 0
    cached = {}  # operand slot -> the register the instruction before flagged .reuse there
    for text in body:
        m = FFMA.match(text)
        if not m:
            cached = {}
            continue
        read, flagged = set(), {}
        for slot, (register, reuse) in enumerate(((m.group(2), m.group(3)), (m.group(4), m.group(5)),
                                                  (m.group(6), m.group(7)))):
            if cached.get(slot) != register:
                read.add(int(register))
            if reuse:
                flagged[slot] = register
        cached = flagged
        most = max(collections.Counter(r % 2 for r in read).values(), default=0)
        two += most >= 2
        three += most >= 3
    return two, three


def describe(body):
    mix = collections.Counter(opcode(t) for t in body)
    ffmas = [m for m in map(FFMA.match, body) if m]
    in_place = sum(m.group(1) == m.group(6) for m in ffmas)
    reuse = sum(bool(m.group(g)) for m in ffmas for g in (3, 5, 7))
    uniform = sum(n for op, n in mix.items() if op.startswith("U"))
    distances = load_distances(body)
    near = sum(d <= 8 for d in distances)
    loads = (f"shared-memory loads to their first use: median {distances[len(distances) // 2]} instructions, "
             f"{near} of {len(distances)} within 8" if distances else "no shared-memory loads")
    two, three = bank_conflicts(body)
    return [f"{len(body)} instructions; {len(ffmas)} FFMA, {reuse} reuse flags on their operands, "
            f"{in_place} accumulating in place (destination = addend); {uniform} on uniform registers",
            "mix: " + ", ".join(f"{op} {n}" for op, n in mix.most_common()), loads,
            f"bank conflicts: {two} FFMAs read two registers of one bank from the file, {three} three"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("listings", nargs="+", help="cuobjdump -sass output, one kernel each")
    parser.add_argument("--body", help="write each main loop's instructions into this folder")
    args = parser.parse_args(argv)
    for path in map(Path, args.listings):
        body = main_loop(first_function(path.read_text()))
        print(f"{path.name}:")
        for line in describe(body):
            print(f"  {line}")
        if args.body:
            Path(args.body).mkdir(parents=True, exist_ok=True)
            (Path(args.body) / f"{path.stem}.loop.txt").write_text("\n".join(body) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
