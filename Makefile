# kgen's interface. `make gen SPEC=specs/x.json` regenerates one spec (all of specs/
# without SPEC); `make test` builds and runs every test. Both install what they need.
BUILD ?= build
KGEN := $(BUILD)/generator/kgen
SPECS := $(sort $(wildcard specs/*.json))
SPEC ?= $(SPECS)
# The specs whose tpu kernels the bundle gate holds: decode kernels have their own static
# cost (bench/tpu_decode_cost.py; docs/benchmarks.md).
TPU_SPECS = $(shell grep -l '"tpu"' $(SPECS) | xargs grep -L '"attention_decode"')
JOBS ?= 2

.PHONY: deps build gen check-generated tune format-check audit test verify tpu-bundles bench-tpu cuda verify-gpu bench-cuda clean

deps:
	@deps/install.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja >/dev/null
	@ninja -C $(BUILD) -j $(JOBS) --quiet

# kgen gen writes every file of each spec's folder: the tpu kernels' tpu_custom_call payloads
# through jaxlib's Mosaic serializer in .venv (docs/python.md).
gen: build
	$(KGEN) gen $(SPEC)

# Fails with a unified diff and the fix command when generated/ is stale, or when a spec's
# "auto" tiles have no current entry in tuning/ (docs/tuning.md).
check-generated: build
	$(KGEN) gen --check $(SPECS)

# Re-tunes every pass whose tiles SPEC writes "auto" (default: every spec; the others are
# passed over) and rewrites its entries in tuning/<target>/<device>.json (docs/tuning.md):
# tpu by libtpu's static bundles (deviceless), CUDA by the compile-facts model (nvcc). Then
# make gen. TUNE_BUDGET=N measures the N tilings nearest the default rule's.
tune: build
	@deps/install.sh libtpu
	$(KGEN) tune --auto $(if $(TUNE_BUDGET),--budget $(TUNE_BUDGET)) --jobs $(JOBS) $(SPEC)

# Checked-in generated .cu/.h files and the runtime headers (runtime/) must be in kgen's CUDA
# format (generator/cuda_format.h, docs/audit.md): re-formats each in memory and fails with a
# diff on drift (also in make test).
format-check: build
	$(BUILD)/generator/kgen-format --check generated runtime

# Every generated CUDA kernel parsed by Clang and checked against its MANIFEST.json interface
# and the lint rules (docs/audit.md; also in make test, one test per spec).
audit: build
	$(KGEN) audit $(SPEC)

# The slowest whole-kernel runs (NVIDIA's larger CUTLASS examples on ptxemu, and the tpu kernels
# of specs/ on the CPU, which make verify also records in receipts) carry the ctest label
# verify_only: make verify runs them.
# PyTorch's environment (.venv-torch, ~3 GB from PyPI) downloads in the background meanwhile;
# the python tests run last and wait for it (tests/torch/CMakeLists.txt).
test: deps
	@deps/install.sh torch >.venv-torch.install.log 2>&1 &
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE verify_only

# Regenerates the receipts docs/receipts/<name>.<target>.json of SPEC (default: every spec;
# docs/receipts.md): each tpu kernel executed on the CPU against the reference, checked by
# jaxlib's real Mosaic dialect and compiled by libtpu for its spec's TPU generation,
# deviceless (docs/tpu-deviceless-compile.md); each sm90a kernel compiled for sm_90a and its
# SASS checked, and executed on the CPU from its PTX by ptxemu (docs/cuda-emulation.md); then
# the verify_only tests; then the bundle gate, and kgen.jax's decode across devices exported
# for a v5e 2x2 slice and compiled deviceless (verify/jax_decode_mesh_compile.py). Commit the
# receipts with the kernels they describe.
verify: build
	@deps/install.sh libtpu
	@ninja -C $(BUILD) -j $(JOBS) sm90a_emu_harnesses sm100a_emu_harnesses
	@KGEN=$(KGEN) verify/write_receipts.sh $(SPEC)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L verify_only
	@.venv-libtpu/bin/python bench/tpu_static_cost.py --no-splash --backward --kgen $(KGEN) \
	    --check bench/tpu_bundles.json $(TPU_SPECS)
	@PYTHONPATH=python KGEN_JAX_CPU_LIBRARY=$(BUILD)/python/libkgen_jax_cpu.so \
	    KGEN_TEST_GENERATED=$(BUILD)/tests/python/generated \
	    .venv-libtpu/bin/python verify/jax_decode_mesh_compile.py

# kgen's tpu kernels of bench/specs/tpu against JAX's Splash, by libtpu's static bundle
# counts (docs/benchmarks.md); writes bench-results/tpu/. Nothing runs on a TPU.
bench-tpu: build
	@deps/install.sh libtpu
	@KGEN=$(KGEN) bench/tpu_vs_splash.sh

# Records the bundles and spills per full step of every tpu kernel of specs/ (the forward,
# and the dq and dkv kernels of a spec with a backward), which `make verify` holds them to
# (bench/tpu_static_cost.py --check; docs/tpu-static-cost.md).
tpu-bundles: build
	@deps/install.sh libtpu
	@.venv-libtpu/bin/python bench/tpu_static_cost.py --no-splash --backward --kgen $(KGEN) \
	    --record bench/tpu_bundles.json $(TPU_SPECS)

# sm90a without a GPU: compiles every generated sm90a kernel (and the feature specs of
# tests/cuda/specs) with nvcc for sm_90a, checks each (no spills or local memory, wgmma
# kept, HGMMA in the SASS; verify/cuda/compile_check.py) and links its GPU harness
# $(BUILD)/verify/cuda/sm90a_run_<name> (docs/sm90a-kernel.md, "Running on a GPU").
cuda: build
	@ninja -C $(BUILD) -j $(JOBS) sm90a_harnesses

# The harnesses of the benchmark specs (bench/specs); bench/sm90a_vs_torch.sh runs them.
bench-cuda: build
	@ninja -C $(BUILD) -j $(JOBS) sm90a_bench_harnesses

# On a machine with an H100/H200: every sm90a kernel run by its harness against the float64
# reference (docs/sm90a-kernel.md, "Running on a GPU"), recorded as the gpu check of its
# receipt. Fails without a GPU.
verify-gpu: cuda
	@KGEN=$(KGEN) verify/write_receipts.sh --gpu $(SPEC)

clean:
	rm -rf $(BUILD)
