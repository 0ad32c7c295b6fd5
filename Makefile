# Axon's top-level commands. On a fresh Debian machine:
#   make demo    installs everything, builds Axon and trains the demo model on the axon device
#   make test    the same set-up, then the runtime's C tests (plain and sanitized) and pytest
#                (all but the tests marked slow: make test-slow runs those)
# Both are safe to re-run: set-up only installs what is missing.

PYTHON ?= python3
# mesa-opencl-icd: Mesa's rusticl, the second OpenCL implementation make test-rusticl runs on.
DEB_PACKAGES = pocl-opencl-icd mesa-opencl-icd ocl-icd-opencl-dev opencl-c-headers clinfo libclblast-dev \
	libopenblas-dev ccache make gcc g++
# expecttest: PyTorch's OpInfo database (the conformance sweep) imports it. transformers: the
# Hugging Face model tests and the benchmark's BERT / Llama workloads; matplotlib: its charts;
# torchao: the float8 training test (it declares no dependencies, so torch stays). accelerate,
# peft, diffusers, lightning, torchtitan: the training libraries Axon is tested with
# (docs/ecosystem.md); safetensors comes with transformers.
PY_PACKAGES = torch==2.13.0 pytest ninja numpy scipy pyyaml expecttest transformers==5.24.0 matplotlib torchao==0.18.0 \
	accelerate==1.15.0 peft==0.21.2 diffusers==0.42.1 lightning==2.6.6 torchtitan==0.3.0
# torchvision and timm for the model sweep's torchvision and timm families, in a folder of their
# own that only the sweep puts on its path: the index's torchvision 0.28.0 is a CUDA build whose
# C++ operators do not load with the CPU torch, and installed alongside transformers it stops
# every transformers model from importing (torch_axon/tools/models/model_zoo.py). --no-deps: torch stays.
MODEL_ZOO = .model-zoo
MODEL_ZOO_PACKAGES = torchvision==0.28.0 timm
# ccache's compiler links first: rebuilding the glue costs seconds instead of minutes.
# The build imports torch; autoload is off there so a stale or broken installed Axon cannot
# stop its own rebuild.
BUILD_ENV = PATH=/usr/lib/ccache:$$PATH MAX_JOBS=2 TORCH_DEVICE_BACKEND_AUTOLOAD=0 \
	CCACHE_NOHASHDIR=true CCACHE_BASEDIR=$(CURDIR)

.PHONY: setup deps model-zoo build demo test test-runtime test-python sanitize tsan format lint clean coverage bench bench-kernels soak fuzz warmup models \
	modules accuracy wheel-check test-slow test-rusticl serving-setup test-serving bench-serving bench-fused-eager \
	test-unfused-eager test-python-unfused

# The measurement tools (torch_axon/tools/) write the reports a reader reads (markdown, charts) to
# --out and their raw results and resume checkpoints (JSON, JSON lines) to --data. The repository
# commits the reports in docs/; the data stay in build/reports/ (ignored; make clean removes it, and
# with it the sweeps' resume points).
REPORTS ?= docs
REPORT_DATA ?= build/reports
TOOL_OUTPUT = --out $(REPORTS) --data $(REPORT_DATA)

setup: deps build

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c "import torch, pytest, ninja, numpy, scipy, expecttest, transformers, matplotlib, torchao, accelerate, peft, diffusers, lightning, torchtitan; assert torch.__version__.startswith('2.13.0')" 2>/dev/null || \
		$(PYTHON) -m pip install -q $(PY_PACKAGES)
	@$(MAKE) --no-print-directory model-zoo

model-zoo:
	@[ -d $(MODEL_ZOO)/torchvision ] && [ -d $(MODEL_ZOO)/timm ] || \
		$(PYTHON) -m pip install -q --no-deps --target $(MODEL_ZOO) $(MODEL_ZOO_PACKAGES)

build:
	$(BUILD_ENV) $(PYTHON) -m pip install -q --no-build-isolation -e .

demo: setup
	$(PYTHON) -m torch_axon.demo

test: setup test-runtime sanitize test-python test-python-unfused

test-runtime:
	$(MAKE) -C runtime test

sanitize:
	$(MAKE) -C runtime sanitize

# The runtime's threaded test and its cheap C tests under ThreadSanitizer (issue 24; about a
# minute once built, runtime/build-tsan).
tsan:
	$(MAKE) -C runtime tsan

test-python:
	$(PYTHON) -m pytest tests -q -m "not slow"

# The subset of the tests in tests/rusticl_subset.txt on a second OpenCL implementation, Mesa's
# rusticl on llvmpipe (package mesa-opencl-icd; about two minutes on two cores with a warm kernel
# cache, far longer cold). Skips with a message where no rusticl platform is present.
test-rusticl:
	@if ! RUSTICL_ENABLE=llvmpipe clinfo -l 2>/dev/null | grep -q rusticl; then \
		echo "test-rusticl: skipped: no rusticl OpenCL platform (install mesa-opencl-icd and clinfo)"; \
	else \
		RUSTICL_ENABLE=llvmpipe AXON_DEVICES=rusticl $(PYTHON) -m pytest -q \
			$$(sed -e 's/#.*//' tests/rusticl_subset.txt); \
	fi

# The slow tests: torchrun of a Hugging Face Trainer script, torchtitan with FSDP2 and compiled
# (about 4 minutes on two cores).
test-slow: setup
	$(PYTHON) -m pytest tests -q -m slow

# vLLM 0.32.0 for the serving plugin (torch_axon/serving), in a virtual environment of its own,
# build/vllm-venv: it pins a transformers older than the one the rest of the tests use. The venv
# sees the system packages, so torch and the installed Axon (make build) are its own; vLLM is
# built from source for no device (VLLM_TARGET_DEVICE=empty: none of its CUDA or CPU kernels).
# Slow the first time (a source build); skipped once vllm imports there.
VLLM_VENV = build/vllm-venv
serving-setup:
	@[ -x $(VLLM_VENV)/bin/python ] && $(VLLM_VENV)/bin/python -c "import vllm" 2>/dev/null || { \
		$(PYTHON) -m venv --system-site-packages $(VLLM_VENV) && \
		$(VLLM_VENV)/bin/pip install "setuptools>=77,<81" setuptools-scm setuptools-rust wheel torch==2.13.0 && \
		VLLM_TARGET_DEVICE=empty VLLM_SKIP_VERSION_SUFFIX=1 $(VLLM_VENV)/bin/pip install --no-build-isolation \
			--no-binary vllm vllm==0.32.0 torch==2.13.0; }

# vLLM's offline engine on axon against transformers on the CPU (tests/serving; about 25 s).
# Not part of make test: it needs make serving-setup's environment.
test-serving: serving-setup
	$(VLLM_VENV)/bin/python -m pytest -q tests/serving

# Serving throughput and latency: vLLM on axon at 1, 8 and 32 concurrent requests against
# transformers' generate() on axon and on the CPU (a few minutes; rewrites docs/benchmarks-serving.md
# and the serving section of docs/benchmarks.md, raw results in build/reports/serving.json).
bench-serving: serving-setup
	$(VLLM_VENV)/bin/python -m torch_axon.tools.bench.serving $(TOOL_OUTPUT)

# The OpInfo conformance sweep (resumable from build/reports/op-coverage.jsonl; rewrites the
# generated part of docs/op-coverage.md and build/reports/op-coverage.json).
coverage: setup
	$(PYTHON) -m torch_axon.tools.conformance $(TOOL_OUTPUT) $(SWEEP_ARGS)

# The model sweep: every transformers architecture of the causal-LM, masked-LM, seq2seq,
# image-classification, audio-classification, CTC, speech-seq2seq and image-text-to-text auto
# mappings, tiny and random, plus one small model of each torchvision and timm family, on the CPU
# and on axon (resumable; rewrites docs/models.md and build/reports/models.json, appends to
# build/reports/models.jsonl; MODELS_ARGS="--family timm" selects, MODELS_ARGS=--fresh starts over).
models: setup
	$(PYTHON) -m torch_axon.tools.models $(TOOL_OUTPUT) $(MODELS_ARGS)

# PyTorch's module_db on the CPU and on axon, float32 and float64 (a few minutes; rewrites
# docs/modules.md and build/reports/modules.{json,jsonl}). The OpInfo sweep's other modes:
# SWEEP_ARGS=--forward-ad, --vmap or --compile with make coverage.
modules: setup
	$(PYTHON) -m torch_axon.tools.module_sweep --dtypes float32,float64 $(TOOL_OUTPUT) $(MODULES_ARGS)

# Axon against PyTorch's CPU backend in one run (several minutes); rewrites docs/benchmarks.md,
# docs/benchmarks-collectives.md and docs/benchmarks/*.png, and the raw samples in
# build/reports/benchmarks.json. BENCH_ARGS=--quick checks the suite in a minute; it measures nothing,
# so its report goes to build/bench-quick/ instead.
bench: setup
	$(PYTHON) -m torch_axon.tools.bench \
		$(if $(filter --quick,$(BENCH_ARGS)),--out build/bench-quick --data build/bench-quick,$(TOOL_OUTPUT)) \
		$(BENCH_ARGS)

# Kernels users write (torch_axon/kernels/, examples/) against the built-in ops they replace, eager
# and compiled (rewrites docs/benchmarks-kernels.md and its section of docs/benchmarks.md; a few
# minutes). `make bench` runs these rows too.
bench-kernels: setup
	$(PYTHON) -m torch_axon.tools.bench.kernels $(TOOL_OUTPUT) $(BENCH_ARGS)

# Fused eager mode (docs/fused-eager.md) against op-by-op eager, torch.compile and the CPU
# (rewrites docs/benchmarks-fused-eager.md and its section of docs/benchmarks.md; a few minutes).
bench-fused-eager: setup
	$(PYTHON) -m torch_axon.tools.bench.fused_eager $(TOOL_OUTPUT) $(BENCH_ARGS)

# Fused eager mode (docs/fused-eager.md) is on by default, so make test-python runs the suite with
# it. make test runs again, with the mode off, the files where pointwise work, threads, faults and
# training meet it (about 2 minutes): the op-by-op kernels stay tested; make test-unfused-eager
# runs the whole suite so.
UNFUSED_EAGER_TESTS = tests/test_elementwise.py tests/test_elementwise_activations.py \
	tests/test_special_values.py tests/test_rounding_trig_activations.py tests/test_training.py \
	tests/test_models.py tests/test_processes.py tests/test_threads.py tests/test_fused_optimizers.py \
	tests/test_amp.py tests/test_oom_training.py tests/test_faults.py tests/test_deterministic.py \
	tests/test_exit.py tests/test_elementwise_functional.py
# The compiled special-values cases are left out there: compiled kernels never pass through fused
# eager mode, and they are that pass's slowest tests.
test-python-unfused:
	AXON_FUSED_EAGER=0 $(PYTHON) -m pytest -q -m "not slow" $(UNFUSED_EAGER_TESTS) \
		-k "not (test_special_values_match_cpu and compiled)"

test-unfused-eager:
	AXON_FUSED_EAGER=0 $(PYTHON) -m pytest tests -q -m "not slow"

# The differential fuzzer's long run (issue 24): random programs eager and compiled on axon against
# the CPU (rewrites docs/fuzz.md; FUZZ_ARGS=--programs N --seed S).
fuzz: setup
	$(PYTHON) -m torch_axon.tools.fuzz $(TOOL_OUTPUT) --programs 3000 --seed 8 $(FUZZ_ARGS)

# Long runs (issue 24): 10,000 training steps eager and compiled, watching memory, RSS, file
# descriptors and threads for drift (rewrites docs/soak.md; about ten minutes).
soak: setup
	$(PYTHON) -m torch_axon.tools.soak $(TOOL_OUTPUT) $(SOAK_ARGS)

# The error of Axon's vector-form math against float64 (rewrites docs/vector-math.md).
accuracy: setup
	$(PYTHON) -m torch_axon.tools.bench.accuracy --out $(REPORTS) $(ACCURACY_ARGS)

# Builds the wheel and checks it in a fresh virtual environment (scripts/check_wheel.sh).
wheel-check: deps
	bash scripts/check_wheel.sh

# Compiles the kernels of the common first workloads ahead of time (optional: kernels are built
# at their first launch anyway) and prints the cache folder and its size.
warmup: setup
	$(PYTHON) -m torch_axon.warmup $(WARMUP_ARGS)

format:
	clang-format -i runtime/include/axon/*.h runtime/src/*.[ch] runtime/src/ops/*.[ch] runtime/src/fused/*.[ch] \
		runtime/tests/*.[ch] runtime/tools/*.c csrc/*/*.cpp csrc/*.h
	ruff format torch_axon tests

lint:
	ruff check torch_axon tests

clean:
	$(MAKE) -C runtime clean
	rm -rf build *.egg-info torch_axon/*.so
