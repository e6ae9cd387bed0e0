# The C++ runner's fuzzers: libFuzzer with AddressSanitizer and
# UndefinedBehaviorSanitizer, built with clang into build/fuzz/ (the default
# build stays g++ -O2 in build/). One binary per reader; see fuzz/README.md.
#
#   make fuzz-cc                          build build/fuzz/fuzz-<target> for every target
#   make fuzz-cc-run FUZZ_SECONDS=60      a short run of each target; prints its outcome
#                                         counts and fails on any finding
#   make fuzz-cc-run FUZZ_RUNS=30000      the same, a fixed count of inputs from FUZZ_SEED (CI's):
#                                         FUZZ_RUNS for fuzz-graph, a share of it for the others
#   make fuzz-cc-run FUZZ_TARGETS=pbtxt   only the targets named
#   make fuzz-cc-campaign FUZZ_TARGET=savedmodel   the long campaign of one target
#
# Included from the Makefile; uses its BUILD, GEN_CC, CC_GEN, RUNNER_SRC and CAPI_SRC.

FUZZ_PKGS    := clang libclang-rt-14-dev
FUZZ_CXX     ?= clang++
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CXXFLAGS := -std=c++17 -O1 -g -fno-omit-frame-pointer -ffp-contract=off $(FUZZ_SAN) -I$(GEN_CC) -Irunner -isystem /usr/include/eigen3 \
                 -isystem $(ONEDNN)/include
# Everything graphrun-cc and the C API are made of except graphrun-cc's main().
FUZZ_RUNNER_SRC := $(filter-out runner/cli/main.cc,$(RUNNER_SRC)) $(CAPI_SRC)
FUZZ_SHARED_OBJ := $(patsubst %.cc,$(FUZZ_DIR)/obj/%.o,$(FUZZ_RUNNER_SRC) $(CC_GEN:$(BUILD)/%=%) \
                     $(addprefix fuzz/cc/,outcomes.cc hostile_feeds.cc run_graph.cc graph_mutations.cc sections.cc))

# The targets, each a binary build/fuzz/fuzz-<target> of its own sources over the shared ones.
FUZZ_ALL_TARGETS := graph savedmodel checkpoint pbtxt sidecar
FUZZ_TARGETS ?= $(FUZZ_ALL_TARGETS)
FUZZ_SRC_graph       := fuzz_graph.cc mutator.cc
FUZZ_SRC_savedmodel  := savedmodel_harness.cc savedmodel_mutations.cc fuzz_savedmodel.cc
FUZZ_SRC_checkpoint  := savedmodel_harness.cc savedmodel_mutations.cc fuzz_checkpoint.cc
FUZZ_SRC_pbtxt       := fuzz_pbtxt.cc
FUZZ_SRC_sidecar     := fuzz_sidecar.cc
fuzz_objs = $(patsubst %.cc,$(FUZZ_DIR)/obj/fuzz/cc/%.o,$(FUZZ_SRC_$(1)))
FUZZ_BINS := $(foreach t,$(FUZZ_ALL_TARGETS),$(FUZZ_DIR)/fuzz-$(t))
FUZZ_OBJ := $(sort $(FUZZ_SHARED_OBJ) $(foreach t,$(FUZZ_ALL_TARGETS),$(call fuzz_objs,$(t))))

FUZZ_SECONDS ?= 60
# FUZZ_RUNS=N runs N inputs from seed FUZZ_SEED instead of FUZZ_SECONDS: nearly the same inputs on any
# machine at any speed (fuzz/README.md says why not exactly), which is how CI runs it
FUZZ_RUNS    ?=
# not 0: libFuzzer reads -seed=0 as "pick one"
FUZZ_SEED    ?= 1
FUZZ_CORPUS  ?= $(FUZZ_DIR)/corpus
FUZZ_FLAGS   ?= -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -max_len=1000000
# FUZZ_RUNS scaled for each target (percent): fuzz-graph runs about 500 inputs a second, the readers'
# targets 10-60 (each input writes files and loads, freezes and runs a model), so CI's FUZZ_RUNS=30000
# gives each reader about a minute (fuzz/README.md)
FUZZ_SHARE_graph := 100
FUZZ_SHARE_savedmodel := 15
FUZZ_SHARE_checkpoint := 15
FUZZ_SHARE_pbtxt := 15
FUZZ_SHARE_sidecar := 40
fuzz_length = $(if $(FUZZ_RUNS),-runs=$$(( $(FUZZ_RUNS) * $(FUZZ_SHARE_$(1)) / 100 )) -seed=$(FUZZ_SEED),-max_total_time=$(FUZZ_SECONDS))
# Each target's seeds: the committed test models and fuzz/seeds/ in its format (a SavedModel or a
# model with its weights file packed as sections, fuzz/cc/sections.h), and fuzz/regressions/.
FUZZ_SEEDS_graph = $(wildcard tests/models/*.pb tests/conformance/cases/*/*.pb tests/tf_models/*/*.pb tests/tf_models/*.pb \
                              fuzz/seeds/*.pb fuzz/regressions/*.pb)
FUZZ_SEEDS_savedmodel = $(wildcard fuzz/seeds/*.savedmodel fuzz/regressions/*.savedmodel)
FUZZ_SEEDS_checkpoint = $(FUZZ_SEEDS_savedmodel)
FUZZ_SEEDS_pbtxt = $(wildcard tests/models/*.pbtxt fuzz/seeds/*.pbtxt fuzz/regressions/*.pbtxt)
FUZZ_SEEDS_sidecar = $(wildcard fuzz/seeds/*.sidecar fuzz/regressions/*.sidecar)
# fuzz-graph's corpus keeps its old place
fuzz_corpus = $(if $(filter graph,$(1)),$(FUZZ_CORPUS),$(FUZZ_DIR)/corpus-$(1))

.PHONY: fuzz-cc fuzz-cc-run fuzz-sysdeps fuzz-corpus

# The clang packages are installed only for the fuzz targets, never by `make setup`.
fuzz-sysdeps: $(FUZZ_DIR)/.sysdeps
$(FUZZ_DIR)/.sysdeps: fuzz/fuzz.mk
	@mkdir -p $(FUZZ_DIR)
	$(call install_packages,the fuzzer,$(FUZZ_PKGS))
	@touch $@

fuzz-cc: $(BUILD)/.sysdeps $(FUZZ_DIR)/.sysdeps $(ONEDNN_STAMP)
	@$(MAKE) --no-print-directory -j$(NPROC) $(FUZZ_BINS)

define fuzz_binary
$(FUZZ_DIR)/fuzz-$(1): $(FUZZ_SHARED_OBJ) $(call fuzz_objs,$(1))
	$$(FUZZ_CXX) $$(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $$@ $$^ $$$$(pkg-config --libs protobuf) $$(DNNL_LIBS) -lzip -lpthread \
	  -Wl,-rpath,'$$$$ORIGIN/../onednn/lib'
endef
$(foreach t,$(FUZZ_ALL_TARGETS),$(eval $(call fuzz_binary,$(t))))

$(FUZZ_DIR)/obj/gen/%.o: $(GEN_CC)/%.cc $(ONEDNN_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

FUZZ_COVERAGE_IGNORE := fuzz/cc/coverage_ignore.txt
$(FUZZ_DIR)/obj/%.o: %.cc $(CC_GEN) $(ONEDNN_STAMP) $(FUZZ_COVERAGE_IGNORE)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -fsanitize-coverage-ignorelist=$(FUZZ_COVERAGE_IGNORE) \
	  $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

-include $(FUZZ_OBJ:.o=.d)

# Each target's seeds (every input a finding was fixed for among them: each run replays them first),
# copied in at run time; the corpus itself (what the fuzzer adds) stays out of git.
fuzz-corpus:
	@$(foreach t,$(FUZZ_TARGETS),mkdir -p $(call fuzz_corpus,$(t)) && \
	  for f in $(FUZZ_SEEDS_$(t)); do cp -n $$f $(call fuzz_corpus,$(t))/seed-$$(echo $$f | tr '/' '_'); done;)

# A short run of each target in turn. libFuzzer exits non-zero on a finding (the input is saved as
# build/fuzz/<target>-crash-*, -timeout-* or -oom-*); each target's outcome counts come after it.
fuzz-cc-run: fuzz-cc fuzz-corpus ## a short libFuzzer run of each C++ reader and the runtime
	@set -e; for t in $(FUZZ_TARGETS); do rm -f $(FUZZ_DIR)/counts-$$t.txt; done
	$(foreach t,$(FUZZ_TARGETS),GRAPHRUN_FUZZ_COUNTS=$(FUZZ_DIR)/counts-$(t).txt $(FUZZ_DIR)/fuzz-$(t) $(FUZZ_FLAGS) \
	  $(call fuzz_length,$(t)) -artifact_prefix=$(FUZZ_DIR)/$(t)- -print_final_stats=1 $(call fuzz_corpus,$(t)) && \
	  printf 'fuzz-$(t) ' && cat $(FUZZ_DIR)/counts-$(t).txt && ) true

# The long campaign of one target (see fuzz/README.md): fork mode with one worker, which keeps going
# past findings and saves each under build/fuzz/campaign-<target>/; each worker job appends its
# outcome counts to that folder's counts.txt. With FUZZ_CAMPAIGN_RUNS=N it is instead N inputs in
# one process from FUZZ_SEED, stopping at the first finding: about three times the inputs a second,
# as no worker replays the corpus on start. A campaign longer than one sitting runs in legs: run the
# target again (another FUZZ_SEED) and it goes on from the corpus grown so far; log.txt keeps each
# leg, and counts.txt sums them, a stopped leg's counts included (outcomes.cc).
FUZZ_CAMPAIGN_SECONDS ?= 2400
FUZZ_CAMPAIGN_RUNS ?=
fuzz_campaign_length = $(if $(FUZZ_CAMPAIGN_RUNS),-runs=$(FUZZ_CAMPAIGN_RUNS) -seed=$(FUZZ_SEED),-fork=1 \
  -ignore_timeouts=1 -ignore_crashes=1 -ignore_ooms=1 -max_total_time=$(FUZZ_CAMPAIGN_SECONDS))
FUZZ_TARGET ?= graph
FUZZ_CAMPAIGN := $(FUZZ_DIR)/campaign$(if $(filter graph,$(FUZZ_TARGET)),,-$(FUZZ_TARGET))
.PHONY: fuzz-cc-campaign
fuzz-cc-campaign: FUZZ_TARGETS = $(FUZZ_TARGET)
fuzz-cc-campaign: fuzz-cc fuzz-corpus ## a long libFuzzer campaign of one target (FUZZ_TARGET=graph)
	@mkdir -p $(FUZZ_CAMPAIGN)
	GRAPHRUN_FUZZ_COUNTS=$(FUZZ_CAMPAIGN)/counts.txt $(FUZZ_DIR)/fuzz-$(FUZZ_TARGET) $(FUZZ_FLAGS) $(fuzz_campaign_length) \
	  -artifact_prefix=$(FUZZ_CAMPAIGN)/ -print_final_stats=1 $(call fuzz_corpus,$(FUZZ_TARGET)) >> $(FUZZ_CAMPAIGN)/log.txt 2>&1
	@grep -E '^#[0-9]+(: |\s+DONE)' $(FUZZ_CAMPAIGN)/log.txt | tail -1
	@awk '{for (i = 3; i <= 6; i++) {split($$i, kv, "="); sum[kv[1]] += kv[2]}} END {for (k in sum) print k, sum[k]}' \
	  $(FUZZ_CAMPAIGN)/counts.txt
	@ls $(FUZZ_CAMPAIGN) | grep -E '^(crash|timeout|oom|leak)-' && exit 1 || echo "no findings"
