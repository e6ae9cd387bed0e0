# The Python runtime's fuzzer (fuzz/py). Included by the top-level Makefile.
#   make fuzz-py-run FUZZ_SECONDS=60    short run: counts per class, exit 1 on any finding
#   make fuzz-py-run FUZZ_RUNS=40000    the same, a fixed count of cases from FUZZ_SEED (CI's: a seed and
#                                       a count replay the same cases on any machine)
#   make fuzz-py-run FUZZ_PY_SURFACE=checkpoint   one reader only (graphdef, saved_model, checkpoint,
#                                       meta, sidecar, pbtxt, images; default all of them, drawn per case)
#   make fuzz-py-replay                 rerun every saved finding against the current code
# FUZZ_SECONDS, FUZZ_RUNS and FUZZ_SEED are fuzz/fuzz.mk's, included before this: one set for both fuzzers
FUZZ_PY_OUT ?= build/fuzz-py
FUZZ_PY_SURFACE ?= all

.PHONY: fuzz-py-run fuzz-py-replay

fuzz-py-run: $(VENV)/.installed $(PY_GEN) ## a short fuzz run of the Python runtime
	$(VPY) fuzz/py/run_fuzz.py $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),--seconds $(FUZZ_SECONDS)) --seed $(FUZZ_SEED) \
	  --surface $(FUZZ_PY_SURFACE) --out $(FUZZ_PY_OUT)

fuzz-py-replay: $(VENV)/.installed $(PY_GEN) ## replay the Python fuzzer's findings
	@ls $(FUZZ_PY_OUT)/crashes/*.case >/dev/null 2>&1 || { echo "no saved findings in $(FUZZ_PY_OUT)/crashes"; exit 0; }
	$(VPY) fuzz/py/run_fuzz.py --replay $(FUZZ_PY_OUT)/crashes/*.case
