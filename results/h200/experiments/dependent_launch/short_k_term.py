"""Not a tool: the offline fit of issue 74, session 16 (docs/notes/10_tuned.md). Does a per-wave term growing with the block's C tile let the fp32 model choose well at short K?
In-sample fits on H200 timings: seed 5's every-plan file (older kernels, 32x256 counted 2 an SM) and
session 16's 24 short problems (f555da4's kernels)."""
import sys
from pathlib import Path
REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "scripts"))
import fit_fp32_model as F
from fit_bf16_cost import geomean

SEED5 = REPO / "results/h200/experiments/fits/fp32_model/fp32_plans_seed5.csv"
SHORT = REPO / "results/h200/experiments/dependent_launch/plans_short_problems.csv"
model, _ = F.read_header(F.repo_path(F.HEADER))
seed5 = F.with_blocks_per_sm(F.timed(F.read_plans([SEED5])), {"32x256": 3}, 132)
short = F.timed(F.read_plans([SHORT]))
both = dict(seed5); both.update(short)

def predicted_with_tile(terms, m):
    launch, split_launch, block_start, float_load_fmas, per_value, fmas_per_second, dram_rate = m.constants
    full, alone = m.shares[terms["tile"]]
    fma_times = terms["block_fmas"] * (1 + float_load_fmas * terms["float_loads_per_fma"])
    start = block_start + per_value * terms["block_m"] * terms["block_n"]
    def wave(blocks):
        return fma_times / (min(alone, full / blocks) * fmas_per_second) + start
    compute = terms["full_waves"] * wave(terms["blocks_per_sm"]) + (wave(terms["last_wave"]) if terms["last_wave"] > 0 else 0)
    split = split_launch + terms["split_bytes"] / dram_rate if terms["split_bytes"] > 0 else 0.0
    return launch + max(compute, terms["dram_bytes"] / dram_rate) + split

def summary(label, m, predict):
    F.predicted = predict
    out = [label]
    for name, probs in (("seed 5 (147)", seed5), ("short (24)", short)):
        chosen = [F.track_choice(s, p, m, 132) or min(p, key=lambda x: predict(x, m)) for s, p in probs.items()]
        fastest = [min(p, key=lambda x: x["seconds"]) for p in probs.values()]
        errs = sorted(abs(predict(x, m) / x["seconds"] - 1) for p in probs.values() for x in p)
        out.append(f"  {name}: choices {100*geomean([c['cublas']/c['seconds'] for c in chosen]):.1f} % of SGEMM, "
                   f"fastest timed {100*geomean([c['cublas']/c['seconds'] for c in fastest]):.1f} %, "
                   f"median |error| {100*errs[len(errs)//2]:.1f} %")
    print("\n".join(out))

orig = F.predicted
summary("the header's model (fitted on the H100)", model, orig)
F.predicted = orig
base = F.fit_model(both, model, 132)
summary("the same form refitted on both files (in sample)", base, orig)
print("   constants", ["%.3g" % c for c in base.constants], "margin", base.margin)
ext_start = F.Model(model.constants[:4] + (2e-11,) + model.constants[4:], model.shares, model.margin)
F.FITTED = 5
F.predicted = predicted_with_tile
ext = F.fit_model(both, ext_start, 132)
summary("with a start a wave of c x block_m x block_n, refitted on both (in sample)", ext, predicted_with_tile)
print("   constants", ["%.3g" % c for c in ext.constants], "margin", ext.margin)
print("   per 128 x 128 block %.2f us, per 64 x 64 %.2f us" % (ext.constants[4]*16384*1e6, ext.constants[4]*4096*1e6))
print("\nshort problems, the extended model's choice against the header's:")
for s, p in sorted(short.items(), key=lambda kv: kv[0][2]):
    F.predicted = orig
    a = F.track_choice(s, p, model, 132) or min(p, key=lambda x: orig(x, model))
    F.predicted = predicted_with_tile
    b = F.track_choice(s, p, ext, 132) or min(p, key=lambda x: predicted_with_tile(x, ext))
    best = min(p, key=lambda x: x["seconds"])
    print(f"  {s[0]}x{s[1]}x{s[2]}: header {a['tile']}/{a['parts']} {a['cublas']/a['seconds']:.3f}, extended {b['tile']}/{b['parts']} {b['cublas']/b['seconds']:.3f}, fastest {best['tile']}/{best['parts']} {best['cublas']/best['seconds']:.3f}")
