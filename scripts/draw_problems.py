"""The problems of a random draw (scripts/draw_shapes.py): a pure function of a seed and a
count, each problem drawn after the ones before it from one random.Random(seed), so that a
draw of 50 is the first 50 of a draw of 150. Odd-numbered problems are transformer layer
GEMMs, even-numbered ones plain: half and half.
"""

import math
import random
from typing import NamedTuple

HEAD_DIM = 128
HIDDEN = (1024, 8192)  # log-uniform, rounded to a multiple of HIDDEN_STEP
HIDDEN_STEP = 128
MLP_RATIO = (2.5, 4.0)  # uniform; the intermediate size rounded to a multiple of MLP_STEP
MLP_STEP = 256
VOCAB = (32000, 256000)  # log-uniform, rounded to a multiple of VOCAB_STEP
VOCAB_STEP = 64
TOKENS = (1, 16384)  # log-uniform, any integer
PLAIN = (16, 16384)  # M, N and K each log-uniform, any integer
LAYER_KINDS = ("qkv", "attn_out", "mlp_up", "mlp_down", "vocab")
KINDS = (*LAYER_KINDS, "plain")
# Key-value heads of the QKV projection, from the query heads q: as many (multi-head),
# q / 4 or q / 8 (grouped), or 8; at least 1, at most q.
KV_HEADS = (lambda q: q, lambda q: q // 4, lambda q: q // 8, lambda q: 8)

# The guard: a problem over either is left out of the run (and counted as skipped).
MAX_FLOPS = 2 * 8192 ** 3
MAX_BYTES = 60e9
# The bands of M the report takes its statistics over.
BANDS = (("M ≤ 256", lambda m: m <= 256), ("256 < M < 1024", lambda m: 256 < m < 1024),
         ("M ≥ 1024", lambda m: m >= 1024))

RULE = (f"Problem 1, 3, 5, ... is a transformer layer GEMM, C = A B with A = tokens x K and B = K x N "
        f"(the weights), of a model drawn for it: hidden size log-uniform over {HIDDEN[0]}..{HIDDEN[1]}, "
        f"rounded to a multiple of {HIDDEN_STEP}; heads of {HEAD_DIM}, so hidden / {HEAD_DIM} query heads; "
        "key-value heads one of (as many, a quarter, an eighth, 8), uniformly, at least 1 and at most "
        f"the query heads; MLP intermediate size a ratio uniform over {MLP_RATIO[0]}..{MLP_RATIO[1]} "
        f"times the hidden size, rounded to a multiple of {MLP_STEP}; vocabulary log-uniform over "
        f"{VOCAB[0]}..{VOCAB[1]}, rounded to a multiple of {VOCAB_STEP}; tokens M log-uniform over "
        f"{TOKENS[0]}..{TOKENS[1]}, any integer. The GEMM is one of five, uniformly: qkv (K = hidden, "
        f"N = hidden + 2 x kv heads x {HEAD_DIM}), attn_out (K = N = hidden), mlp_up (K = hidden, "
        "N = 2 x intermediate: gate and up fused), mlp_down (K = intermediate, N = hidden), vocab "
        "(K = hidden, N = vocabulary). Problem 2, 4, 6, ... is plain: M, N and K each log-uniform "
        f"over {PLAIN[0]}..{PLAIN[1]}, any integer. Log-uniform over a..b for an integer: "
        "floor(exp(u)), u uniform over ln a .. ln (b + 1). All drawn in that order from Python's "
        "random.Random(seed).")


def guard_rule(max_flops=MAX_FLOPS, max_bytes=MAX_BYTES):
    return (f"A problem is skipped (not run, counted as skipped) when its 2MNK exceeds {max_flops:.3g} "
            f"FLOP or its memory estimate, (MK + KN) x 14 + MN x 20 bytes (A and B in FP32, bf16 and "
            f"float64; C three times in FP32 and once in float64), exceeds {max_bytes:.3g} bytes.")


class Problem(NamedTuple):
    index: int  # 1, 2, ... in the order drawn
    name: str
    kind: str  # one of KINDS
    m: int
    n: int
    k: int


def log_uniform_int(rng, low, high):
    """An integer of low..high, log-uniform: floor(exp(u)), u uniform over ln low .. ln (high + 1)."""
    value = int(math.exp(rng.uniform(math.log(low), math.log(high + 1))))
    return min(max(value, low), high)


def _rounded(value, step, low, high):
    return min(max(round(value / step) * step, low), high)


def _layer(rng):
    """(name without the index, kind, m, n, k) of one layer GEMM of a model drawn for it."""
    hidden = _rounded(math.exp(rng.uniform(math.log(HIDDEN[0]), math.log(HIDDEN[1]))), HIDDEN_STEP, *HIDDEN)
    query_heads = hidden // HEAD_DIM
    kv_heads = min(max(rng.choice(KV_HEADS)(query_heads), 1), query_heads)
    intermediate = _rounded(rng.uniform(*MLP_RATIO) * hidden, MLP_STEP, MLP_STEP, 4 * HIDDEN[1])
    vocab = _rounded(math.exp(rng.uniform(math.log(VOCAB[0]), math.log(VOCAB[1]))), VOCAB_STEP, *VOCAB)
    tokens = log_uniform_int(rng, *TOKENS)
    kind = rng.choice(LAYER_KINDS)
    k, n, model = {
        "qkv": (hidden, hidden + 2 * kv_heads * HEAD_DIM, f"h{hidden}_kv{kv_heads}"),
        "attn_out": (hidden, hidden, f"h{hidden}"),
        "mlp_up": (hidden, 2 * intermediate, f"h{hidden}_i{intermediate}"),
        "mlp_down": (intermediate, hidden, f"h{hidden}_i{intermediate}"),
        "vocab": (hidden, vocab, f"h{hidden}_v{vocab}"),
    }[kind]
    return f"{kind}_{model}_t{tokens}", kind, tokens, n, k


def _plain(rng):
    m, n, k = (log_uniform_int(rng, *PLAIN) for _ in range(3))
    return f"plain_{m}x{n}x{k}", "plain", m, n, k


def draw(seed, count):
    """The `count` problems of the draw `seed`: [Problem], layer and plain in turn. A name
    drawn twice gets its index after it."""
    rng = random.Random(seed)
    problems, names = [], set()
    for index in range(1, count + 1):
        name, kind, m, n, k = _layer(rng) if index % 2 else _plain(rng)
        if name in names:
            name = f"{name}_{index}"
        names.add(name)
        problems.append(Problem(index, name, kind, m, n, k))
    return problems


def band(m):
    """The band of M a problem's statistics go to."""
    return next(name for name, member in BANDS if member(m))


def skip_reason(problem, max_flops=MAX_FLOPS, max_bytes=MAX_BYTES):
    """Why the guard leaves `problem` out, or None."""
    m, n, k = problem.m, problem.n, problem.k
    if 2 * m * n * k > max_flops:
        return f"2MNK = {2 * m * n * k:.3g} FLOP, over {max_flops:.3g}"
    estimate = (m * k + k * n) * (4 + 2 + 8) + m * n * (4 * 3 + 8)
    if estimate > max_bytes:
        return f"about {estimate:.3g} bytes of memory, over {max_bytes:.3g}"
    return None
