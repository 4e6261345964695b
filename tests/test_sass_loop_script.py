"""scripts/sass_loop.py: the main loop is the longest backward branch of the first function;
its FFMAs' reuse flags and accumulators in place are counted; each shared-memory load's
distance to the first instruction that reads what it wrote; the FFMAs that read two or three
registers of one bank (r % 2), an operand the FFMA before flagged .reuse in its slot not read."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import sass_loop  # noqa: E402

LISTING = """
        Function : kernel_one
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   LDS.128 R4, [R2] ;
        /*0020*/                   FFMA R10, R20.reuse, R21, R10 ;
        /*0030*/                   FFMA R11, R20, R22, R12 ;
        /*0040*/                   FFMA R13, R5, R23, R13 ;
        /*0050*/                   LDS R8, [R3] ;
        /*0060*/                   FFMA R14, R8, R24, R14 ;
        /*0070*/                   BRA 0x10 ;
        /*0080*/                   EXIT ;
        Function : kernel_two
        /*0000*/                   BRA 0x0 ;
"""


class SassLoopTest(unittest.TestCase):
    def body(self):
        return sass_loop.main_loop(sass_loop.first_function(LISTING))

    def test_the_main_loop_is_the_first_functions_longest_backward_branch(self):
        body = self.body()
        self.assertEqual(body[0], "LDS.128 R4, [R2]")
        self.assertEqual(body[-1], "BRA 0x10")

    def test_the_ffmas_and_the_loads_distances(self):
        # The LDS.128 writes R4-R7: R5 is read three instructions on; the LDS writes R8, read at once.
        self.assertEqual(sass_loop.load_distances(self.body()), [1, 3])
        summary = sass_loop.describe(self.body())
        self.assertIn("4 FFMA, 1 reuse flags on their operands, 3 accumulating in place", summary[0])
        self.assertEqual(summary[2], "shared-memory loads to their first use: median 3 instructions, 2 of 2 within 8")

    def test_bank_conflicts_leave_out_the_operands_from_the_reuse_cache(self):
        # R20 R21 R10: two of bank 0. R20 from the cache, R22 R12: two of bank 0 (three with R20
        # read again). R5 R23 R13: three of bank 1. After the LDS, R8 R24 R14: three of bank 0.
        self.assertEqual(sass_loop.bank_conflicts(self.body()), (4, 2))
        self.assertEqual(sass_loop.describe(self.body())[3],
                         "bank conflicts: 4 FFMAs read two registers of one bank from the file, 2 three")


if __name__ == "__main__":
    unittest.main()
