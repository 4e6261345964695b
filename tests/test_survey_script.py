"""The survey script's kernel names and tables, without a GPU."""
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import survey  # noqa: E402

CUTLASS = "_ZN7cutlass7Kernel2I58cutlass_80_tensorop_s16816gemm_bf16_256x128_32x6_nn_align8EEvNT_6ParamsE"
NVJET = "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT"


def row(size, kind, family, kernel, tflops, ratio=None, verified="true"):
    judged = kind == "judged"
    return {"size": size, "kind": kind, "family": family, "kernel": kernel, "config": "algo 21",
            "tflops": tflops, "cublas_tflops": tflops / ratio if judged else None,
            "ratio_to_cublas": ratio, "fraction_of_ceiling": tflops / 650 if judged else None,
            "verified": verified if judged else "unverified", "timing": "launches" if judged else "",
            "gpu": "Fixture GPU", "cublas_version": "130100"}


class ShortKernelName(unittest.TestCase):
    def test_mangled_names_give_their_longest_identifier(self):
        self.assertEqual(survey.short_kernel_name(CUTLASS), "cutlass_80_tensorop_s16816gemm_bf16_256x128_32x6_nn_align8")

    def test_plain_and_joined_names(self):
        self.assertEqual(survey.short_kernel_name(NVJET), NVJET)
        self.assertEqual(survey.short_kernel_name(f"{CUTLASS} + splitKreduce"),
                         "cutlass_80_tensorop_s16816gemm_bf16_256x128_32x6_nn_align8 + splitKreduce")

    def test_version(self):
        self.assertEqual(survey.cublas_version("130100"), "13.1.0")


class SurveyMarkdown(unittest.TestCase):
    def rows(self):
        rows = [row(4096, "judged", "hopper_or_later", NVJET, 700.0, 1.0),
                row(4096, "judged", "before_hopper", CUTLASS, 400.0, 0.58),
                row(4096, "judged", "before_hopper", "older_kernel", 410.0, 0.59, verified="false"),
                row(4096, "judged", "stage", "stage 14 multistage", 440.0, 0.62)]
        rows += [row(4096, "screen", "before_hopper", f"kernel_{i}", 300.0 + i) for i in range(10)]
        rows += [row(4096, "screen", "before_hopper", CUTLASS, 420.0),
                 row(4096, "screen", "before_hopper", CUTLASS, 380.0),
                 row(4096, "screen", "hopper_or_later", NVJET, 720.0)]
        return rows

    def test_judged_rows_stage_first_then_families_fastest_first(self):
        markdown = survey.survey_markdown(self.rows())
        order = [markdown.index(name) for name in ("| `stage 14 multistage`", "| `older_kernel`",
                                                   "| `cutlass_80_tensorop", "| `nvjet_sm90")]
        self.assertEqual(order, sorted(order))
        self.assertIn("| 4096 | `older_kernel` | cuBLASLt, before Hopper | 410.0 | 59.0% | 63.1% | **no** |", markdown)
        self.assertIn("cuBLASLt 13.1.0", markdown)

    def test_an_unmeasured_ceiling_is_a_dash(self):
        rows = self.rows()
        rows[0]["fraction_of_ceiling"] = None  # sgemm_survey leaves the field empty
        markdown = survey.survey_markdown(rows)
        self.assertIn("| 4096 | `nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT` | cuBLASLt, Hopper | 700.0 | 100.0% | – "
                      "| yes |", markdown)

    def test_screen_keeps_each_kernels_best_configuration_and_the_fastest_few(self):
        markdown = survey.survey_markdown(self.rows())
        screen = markdown[markdown.index("The screen"):]
        self.assertIn("| cuBLASLt, before Hopper | `cutlass_80_tensorop_s16816gemm_bf16_256x128_32x6_nn_align8` | 420.0 |",
                      screen)
        self.assertEqual(screen.count("cuBLASLt, before Hopper"), survey.SCREEN_ROWS)
        self.assertNotIn("kernel_0", screen)  # the slowest fall off the table
        self.assertIn("kernel_9", screen)

    def test_rows_of_two_timings_are_refused(self):
        rows = self.rows()
        rows[0]["timing"] = "blocks"
        with self.assertRaises(ValueError):
            survey.survey_markdown(rows)


if __name__ == "__main__":
    unittest.main()
