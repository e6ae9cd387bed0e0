# The C++ runner's fuzzer: libFuzzer with AddressSanitizer and
# UndefinedBehaviorSanitizer, built with clang into build/fuzz/ (the default
# build stays g++ -O2 in build/). See fuzz/README.md.
#
#   make fuzz-cc                          build build/fuzz/fuzz-graph
#   make fuzz-cc-run FUZZ_SECONDS=60      a short run; prints the outcome counts
#                                         and fails on any finding
#   make fuzz-cc-run FUZZ_RUNS=30000      the same, a fixed count of inputs from FUZZ_SEED (CI's)
#   make fuzz-cc-campaign                 the long campaign (FUZZ_CAMPAIGN_SECONDS=2400)
#
# Included from the Makefile; uses its BUILD, GEN_CC, CC_GEN and RUNNER_SRC.

FUZZ_PKGS    := clang libclang-rt-14-dev
FUZZ_CXX     ?= clang++
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz-graph
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CXXFLAGS := -std=c++17 -O1 -g -fno-omit-frame-pointer -ffp-contract=off $(FUZZ_SAN) -I$(GEN_CC) -Irunner -isystem /usr/include/eigen3 \
                 -isystem $(ONEDNN)/include
FUZZ_HARNESS := $(wildcard fuzz/cc/*.cc)
# Everything graphrun-cc is made of except its main().
FUZZ_RUNNER_SRC := $(filter-out runner/cli/main.cc,$(RUNNER_SRC))
FUZZ_OBJ := $(patsubst %.cc,$(FUZZ_DIR)/obj/%.o,$(FUZZ_RUNNER_SRC) $(FUZZ_HARNESS) $(CC_GEN:$(BUILD)/%=%))

FUZZ_SECONDS ?= 60
# FUZZ_RUNS=N runs N inputs from seed FUZZ_SEED instead of FUZZ_SECONDS: nearly the same inputs on any
# machine at any speed (fuzz/README.md says why not exactly), which is how CI runs it
FUZZ_RUNS    ?=
# not 0: libFuzzer reads -seed=0 as "pick one"
FUZZ_SEED    ?= 1
FUZZ_LENGTH   = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS) -seed=$(FUZZ_SEED),-max_total_time=$(FUZZ_SECONDS))
FUZZ_CORPUS  ?= $(FUZZ_DIR)/corpus
FUZZ_FLAGS   ?= -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -max_len=1000000
FUZZ_SEEDS    = $(wildcard tests/models/*.pb tests/conformance/cases/*/*.pb tests/tf_models/*/*.pb tests/tf_models/*.pb \
                           fuzz/seeds/*.pb fuzz/regressions/*.pb)

.PHONY: fuzz-cc fuzz-cc-run fuzz-sysdeps fuzz-corpus

# The clang packages are installed only for the fuzz targets, never by `make setup`.
fuzz-sysdeps: $(FUZZ_DIR)/.sysdeps
$(FUZZ_DIR)/.sysdeps: fuzz/fuzz.mk
	@mkdir -p $(FUZZ_DIR)
	$(call install_packages,the fuzzer,$(FUZZ_PKGS))
	@touch $@

fuzz-cc: $(BUILD)/.sysdeps $(FUZZ_DIR)/.sysdeps $(ONEDNN_STAMP)
	@$(MAKE) --no-print-directory -j$(NPROC) $(FUZZ_BIN)

$(FUZZ_BIN): $(FUZZ_OBJ)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $(FUZZ_OBJ) $$(pkg-config --libs protobuf) $(DNNL_LIBS) -lzip -lpthread \
	  -Wl,-rpath,'$$ORIGIN/../onednn/lib'

$(FUZZ_DIR)/obj/gen/%.o: $(GEN_CC)/%.cc $(ONEDNN_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/obj/%.o: %.cc $(CC_GEN) $(ONEDNN_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

-include $(FUZZ_OBJ:.o=.d)

# The seeds are the committed test models and fuzz/regressions/ (every input a
# finding was fixed for: each run replays them first), copied in at run time; the corpus
# itself (what the fuzzer adds) stays out of git.
fuzz-corpus:
	@mkdir -p $(FUZZ_CORPUS)
	@for f in $(FUZZ_SEEDS); do cp -n $$f $(FUZZ_CORPUS)/seed-$$(echo $$f | tr '/' '_'); done

# A short run. libFuzzer exits non-zero on a finding (the input is saved as
# build/fuzz/crash-*, timeout-* or oom-*); the outcome counts come last.
fuzz-cc-run: fuzz-cc fuzz-corpus ## a short libFuzzer run of the C++ runtime
	@rm -f $(FUZZ_DIR)/counts.txt
	GRAPHRUN_FUZZ_COUNTS=$(FUZZ_DIR)/counts.txt $(FUZZ_BIN) $(FUZZ_FLAGS) $(FUZZ_LENGTH) \
	  -artifact_prefix=$(FUZZ_DIR)/ -print_final_stats=1 $(FUZZ_CORPUS)
	@cat $(FUZZ_DIR)/counts.txt

# The long campaign (see fuzz/README.md): fork mode with one worker, which
# keeps going past findings and saves each under build/fuzz/campaign/; each
# worker job appends its outcome counts to build/fuzz/campaign/counts.txt.
FUZZ_CAMPAIGN_SECONDS ?= 2400
FUZZ_CAMPAIGN := $(FUZZ_DIR)/campaign
.PHONY: fuzz-cc-campaign
fuzz-cc-campaign: fuzz-cc fuzz-corpus ## a long libFuzzer campaign
	@mkdir -p $(FUZZ_CAMPAIGN)
	GRAPHRUN_FUZZ_COUNTS=$(FUZZ_CAMPAIGN)/counts.txt $(FUZZ_BIN) $(FUZZ_FLAGS) -fork=1 -ignore_timeouts=1 \
	  -ignore_crashes=1 -ignore_ooms=1 -max_total_time=$(FUZZ_CAMPAIGN_SECONDS) \
	  -artifact_prefix=$(FUZZ_CAMPAIGN)/ -print_final_stats=1 $(FUZZ_CORPUS) > $(FUZZ_CAMPAIGN)/log.txt 2>&1
	@grep -E '^#[0-9]+: ' $(FUZZ_CAMPAIGN)/log.txt | tail -1
	@awk '{for (i = 3; i <= 6; i++) {split($$i, kv, "="); sum[kv[1]] += kv[2]}} END {for (k in sum) print k, sum[k]}' \
	  $(FUZZ_CAMPAIGN)/counts.txt
	@ls $(FUZZ_CAMPAIGN) | grep -E '^(crash|timeout|oom|leak)-' && exit 1 || echo "no findings"
