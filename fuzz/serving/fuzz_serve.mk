# The request fuzzer of graphrun serve (fuzz/serving). Included by the top-level Makefile after fuzz/fuzz.mk.
#   make fuzz-serve-run FUZZ_RUNS=20000   mutated requests of both protocols from FUZZ_SEED against the
#                                         server in process; counts per class, exit 1 on any finding
#   make fuzz-serve-replay                rerun every saved finding against the current code
# Without FUZZ_RUNS, FUZZ_SERVE_RUNS cases (a run of about a minute here).
FUZZ_SERVE_OUT ?= build/fuzz-serve
FUZZ_SERVE_RUNS ?= 20000

.PHONY: fuzz-serve-run fuzz-serve-replay

fuzz-serve-run: $(VENV)/.installed $(PY_GEN) ## a short fuzz run of graphrun serve's request paths
	$(VPY) fuzz/serving/fuzz_serve.py --runs $(or $(FUZZ_RUNS),$(FUZZ_SERVE_RUNS)) --seed $(FUZZ_SEED) \
	  --out $(FUZZ_SERVE_OUT)

fuzz-serve-replay: $(VENV)/.installed $(PY_GEN) ## replay the request fuzzer's findings
	@ls $(FUZZ_SERVE_OUT)/findings/*.case >/dev/null 2>&1 || { echo "no saved findings in $(FUZZ_SERVE_OUT)/findings"; exit 0; }
	$(VPY) fuzz/serving/fuzz_serve.py --replay $(FUZZ_SERVE_OUT)/findings/*.case --out $(FUZZ_SERVE_OUT)/replay
