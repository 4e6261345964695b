"""The shape suite's problems: squares, a transformer's layer GEMMs from 64 to 16384
tokens, and skinny and K-heavy problems. scripts/shapes.py runs them and reports
(results/<gpu>/shapes.*); scripts/compare_binaries.py and scripts/tune.py take them too.
Plain Python: nothing here needs matplotlib.
"""

# The layer GEMMs of Llama 3 8B (hidden size 4096; 32 query heads and 8 key-value heads
# of 128; MLP 14336, its gate and up projections fused; vocabulary 128256), as
# C = A B with A = tokens x K and B = K x N, the weights.
MODEL = "Llama 3 8B"
LAYERS = (("qkv", 4096, 4096 + 2 * 8 * 128), ("attn_out", 4096, 4096), ("mlp_up", 4096, 2 * 14336),
          ("mlp_down", 14336, 4096), ("vocab", 4096, 128256))
TOKENS = (64, 128, 256, 1024, 4096, 16384)
# The vocabulary head at 16384 tokens (17 PFLOP, 8 GB of C) would take the suite's time.
MAX_VOCAB_TOKENS = 4096


def suite():
    """(name, group, m, n, k) of every shape, in the order they run."""
    shapes = [(f"square_{n}", "square", n, n, n) for n in (1024, 2048, 4096, 8192, 16384)]
    for tokens in TOKENS:
        for layer, k, n in LAYERS:
            if layer != "vocab" or tokens <= MAX_VOCAB_TOKENS:
                shapes.append((f"{layer}_{tokens}", "layer", tokens, n, k))
    # Skinny: a decode step's batch of 16 tokens, and outputs 64 and 16 columns wide.
    shapes += [("m16", "skinny", 16, 4096, 4096), ("n64", "skinny", 4096, 64, 4096),
               ("n16", "skinny", 8192, 16, 8192)]
    # K-heavy: little output, a long reduction.
    shapes += [("k16384", "k-heavy", 1024, 1024, 16384), ("k32768", "k-heavy", 2048, 2048, 32768),
               ("k65536", "k-heavy", 256, 256, 65536)]
    return shapes


GROUPS = ("square", "layer", "skinny", "k-heavy")
