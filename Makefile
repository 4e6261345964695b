# make            install what the build needs where it is missing (scripts/install_dependencies.sh),
#                 configure (Release) and build; leaves ./sgemm in the repository root
# make test       build, then run the whole test suite through ctest
# make sanitize   compute-sanitizer (memcheck, racecheck) over every stage at small sizes
# make results    measure the ceilings and run every stage on this GPU: regenerate results/<gpu>/
#                 (tables, charts, roofline), the README table and WORKLOG.md
# make check-results  no GPU, seconds: name the committed rows under results/<gpu>/ whose sources (the
#                 stage's kernels/ and dispatch/ files, comments aside) changed since they were measured
#                 (scripts/check_results.py); make results STALE=1 re-measures just those of the squares
# make peak       measure only the ceilings (sgemm peak) -> results/<gpu>/ceilings.csv, and rebuild
#                 the tables and the roofline from the results already there
# make tune       search the tile shapes of stages 10 and 14 on this GPU (results/<gpu>/tuning_stage*.md)
# make survey     cuBLASLt's own bf16 kernels on this GPU, the fastest written before Hopper (mma.sync)
#                 and for it (wgmma) timed beside stages 14 and 20 -> results/<gpu>/cublaslt_survey.md
# make accuracy   the FP32 problem's accuracy and speed by cuBLAS SGEMM, cuBLAS TF32 and BF16x9,
#                 stages 10 and 21-24, on squares and two shapes, every input kind but exact (about 4 minutes
#                 on an H100) -> results/<gpu>/accuracy.md; then the FP8 problem's: the fp8 track and
#                 cuBLASLt in each scaling, and the quantization's own error (4 more) -> accuracy_fp8.md
# make shapes     the shape suite: square, transformer-layer, skinny and K-heavy problems through the
#                 tracks bf16, fp32-tc and fp32, against cuBLAS (GROUPS=layer for some; STAGES="fp32 20" for
#                 some tracks or stages) -> results/<gpu>/shapes.*
# make draw       COUNT problems (default 150) drawn at random from SEED (default 1): layer GEMMs of models of
#                 hidden 1k-8k at 1-16384 tokens, and plain M, N, K of 16-16384, through the same tracks, per
#                 track and band of M (STAGES= as above, PROBLEMS=1-50 for a part, TIMING_SHORT=graph)
#                 -> results/<gpu>/draw_<seed>.*
# make profile    Nsight Compute counters of every stage at N=4096 (STAGE=7 for one) -> results/<gpu>/profile.csv
#
# ARCH selects the GPU architecture: by default the GPU that is present (sm_90 becomes
# 90a, Hopper's full instruction set), or 90a (H100) when there is none.

DETECTED_ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '.' | sed 's/^90$$/90a/')
ARCH ?= $(if $(DETECTED_ARCH),$(DETECTED_ARCH),90a)
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# nvcc from PATH, or where the toolkit's packages put it without adding it to PATH.
NVCC ?= $(or $(shell command -v nvcc),$(wildcard /usr/local/cuda/bin/nvcc))
# The Python with matplotlib that the build found (tests/CMakeLists.txt): the python3 on
# PATH may be a pyenv or venv one without it, where the system's has it.
PYTHON ?= $(or $(shell sed -n 's/^SGEMM_PYTHON:FILEPATH=//p' $(BUILD_DIR)/CMakeCache.txt 2>/dev/null),python3)

.PHONY: all dependencies build test sanitize results check-results peak tune survey accuracy shapes draw profile clean

all: build

dependencies:
	@scripts/install_dependencies.sh

build: dependencies
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DSGEMM_ARCH=$(ARCH) $(if $(NVCC),-DCMAKE_CUDA_COMPILER=$(NVCC)) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@cp $(BUILD_DIR)/sgemm ./sgemm
	@echo "built ./sgemm for sm_$(ARCH)"

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

sanitize: build
	scripts/sanitize.sh ./sgemm

results: build
	$(PYTHON) scripts/regenerate_results.py $(if $(STALE),--stale)

check-results:
	@$(PYTHON) scripts/check_results.py

peak: build
	$(PYTHON) scripts/regenerate_results.py --ceilings-only

profile: build
	$(PYTHON) scripts/profile_stages.py $(if $(STAGE),--stages $(STAGE))

tune: build
	$(PYTHON) scripts/tune.py --stage 10
	$(PYTHON) scripts/tune.py --stage 14

survey: build
	$(PYTHON) scripts/survey.py

accuracy: build
	$(PYTHON) scripts/accuracy.py
	$(PYTHON) scripts/accuracy.py --fp8

shapes: build
	$(PYTHON) scripts/shapes.py $(if $(GROUPS),--groups $(GROUPS)) $(if $(STAGES),--stages $(STAGES))

draw: build
	$(PYTHON) scripts/draw_shapes.py --seed $(or $(SEED),1) --count $(or $(COUNT),150) $(if $(STAGES),--stages $(STAGES)) \
		$(if $(PROBLEMS),--problems $(PROBLEMS)) $(if $(TIMING_SHORT),--timing-short $(TIMING_SHORT))

clean:
	rm -rf $(BUILD_DIR) sgemm
