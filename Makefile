# The front door. `make demo` and `make test` set everything up from a fresh clone:
# system packages for the C++ runner (apt-get, when root), .venv/, Python packages,
# code generated from proto/, and build/graphrun-cc.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
BUILD  := build
GEN_CC := $(BUILD)/gen
PROTOS := $(wildcard proto/*.proto)
PY_GEN := $(patsubst proto/%.proto,graphdef/_proto/%_pb2.py,$(PROTOS))
# graphrun serve's protocol messages: Python only (the C++ runner does not serve).
SERVING_PROTOS := $(wildcard proto/serving/*.proto)
PY_GEN += $(patsubst proto/serving/%.proto,graphdef/_proto/%_pb2.py,$(SERVING_PROTOS))
CC_GEN := $(patsubst proto/%.proto,$(GEN_CC)/%.pb.cc,$(PROTOS))
# The C++ runtime is a core (every layer below session, and session) and two thin clients of it,
# the CLI and the C API, which never include each other (tests/cc/test_layers.py).
CORE_DIRS := core io graph exec kernels passes session
CORE_SRC := $(shell find $(addprefix runner/,$(CORE_DIRS)) -name '*.cc' 2>/dev/null)
CLI_SRC := $(wildcard runner/cli/*.cc)
CAPI_SRC := $(wildcard runner/capi/*.cc)
RUNNER_SRC := $(CORE_SRC) $(CLI_SRC)
SYS_PKGS := g++ make pkg-config protobuf-compiler libprotobuf-dev libeigen3-dev nlohmann-json3-dev libzip-dev graphviz
CXXFLAGS ?= -O2 -g0
# No contraction of a * b + c into an FMA: it would change the bits of ops the numerics policy calls exact,
# and by compiler version; the GEMM kernel asks for its FMAs by name.
CXXFLAGS += -std=c++17 -ffp-contract=off -Wall -Wextra -I$(GEN_CC) -Irunner -isystem /usr/include/eigen3 \
            -isystem $(ONEDNN)/include
# Position-independent, so the core's objects also go into build/libgraphrun.so; no semantic interposition,
# so calls inside the runner stay direct and inlinable, as in the executable.
CXXFLAGS += -fPIC -fno-semantic-interposition
RUNNER := $(BUILD)/graphrun-cc
# oneDNN, from PyPI (runner/third_party/onednn.txt): headers and libdnnl.so.3 in build/onednn/. The
# binaries find the library beside them ($$ORIGIN), so build/ can be copied elsewhere whole. Every
# object depends on it: its headers are system headers to the compiler, which -MMD does not track.
ONEDNN := $(BUILD)/onednn
ONEDNN_STAMP := $(ONEDNN)/.installed
DNNL_LIBS = -L$(ONEDNN)/lib -l:libdnnl.so.3 -lgomp
# graphrun-cc as a library with a C API (runner/capi/graphrun_c.h), for graphrun serve's runtime
LIBGRAPHRUN := $(BUILD)/libgraphrun.so

.PHONY: all help setup sysdeps venv proto bytecode cc native demo test test-profiles bench clean tf-fixtures wheel sdk

all: setup

# `make help` lists every target whose rule line ends in `## what it does`, in every included file.
help: ## list the make targets
	@awk -F':.*## ' '/^[a-zA-Z0-9_.-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: venv proto bytecode cc ## set up .venv, generated code and the C++ runtime

# The package byte-compiled ahead: where PYTHONDONTWRITEBYTECODE is set (CI, containers) Python would
# otherwise compile every module again in each process it starts, doubling graphrun's start-up.
# compileall skips what is up to date, so this costs nothing when nothing changed.
bytecode: proto
	$(VPY) -m compileall -q graphdef

# $(call install_packages,WHAT,PACKAGES): apt-get installs the missing PACKAGES when root, else
# prints the command and stops; WHAT names who needs them. The fuzz targets use it too.
define install_packages
@missing=$$(for p in $(2); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
if [ -n "$$missing" ]; then \
  if [ "$$(id -u)" = 0 ]; then \
    echo "installing system packages for $(1):" $$missing; \
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
  else \
    echo "$(1) needs these system packages; install them and run make again:"; \
    echo "  sudo apt-get install $$missing"; exit 1; \
  fi; \
fi
endef

# The C++ runner's build needs protoc, libprotobuf, Eigen, nlohmann-json and libzip from Debian, and oneDNN
# (with its OpenMP runtime, gcc's libgomp) from PyPI.
sysdeps: $(BUILD)/.sysdeps
$(BUILD)/.sysdeps: Makefile
	@mkdir -p $(BUILD)
	$(call install_packages,the C++ runner,$(SYS_PKGS))
	@touch $@

$(ONEDNN_STAMP): runner/third_party/onednn.txt runner/third_party/unpack_onednn.py | $(VENV)/.installed
	rm -rf $(ONEDNN) && mkdir -p $(ONEDNN)/wheels
	$(VPY) -m pip download -q --no-deps --only-binary=:all: --require-hashes -r runner/third_party/onednn.txt \
	  -d $(ONEDNN)/wheels
	$(VPY) runner/third_party/unpack_onednn.py $(ONEDNN)/wheels $(ONEDNN)
	rm -rf $(ONEDNN)/wheels
	@touch $@

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[dev]'
	@touch $@

# Test-only oracles (TensorFlow, TensorBoard, the serving clients) and the optional extras the tests exercise
# (graphrun's progress bar, Dask, graphrun serve): large, so only `make test` installs them.
$(VENV)/.oracles: $(VENV)/.installed pyproject.toml
	$(VPY) -m pip install -q -e '.[oracle,cli,dask,summary,serve]'
	@touch $@

$(VENV)/.demo: $(VENV)/.installed pyproject.toml
	$(VPY) -m pip install -q -e '.[demo]'
	@touch $@

proto: $(PY_GEN)
# protoc writes a proto's imports as top-level Python imports (`import graph_pb2`); inside the
# package they must be relative. A proto's Python module also waits for those it imports.
graphdef/_proto/%_pb2.py: proto/%.proto $(VENV)/.installed
	$(VPY) -m grpc_tools.protoc -Iproto --python_out=graphdef/_proto $<
	sed -i 's/^import \([a-z_]*_pb2\) as /from . import \1 as /' $@
graphdef/_proto/tensor_bundle_pb2.py graphdef/_proto/meta_graph_pb2.py: graphdef/_proto/graph_pb2.py
graphdef/_proto/saved_object_graph_pb2.py: graphdef/_proto/graph_pb2.py graphdef/_proto/trackable_object_graph_pb2.py
graphdef/_proto/meta_graph_pb2.py: graphdef/_proto/saved_object_graph_pb2.py
graphdef/_proto/%_pb2.py: proto/serving/%.proto $(VENV)/.installed
	$(VPY) -m grpc_tools.protoc -Iproto/serving -Iproto --python_out=graphdef/_proto $<
	sed -i 's/^import \([a-z_]*_pb2\) as /from . import \1 as /' $@
graphdef/_proto/tfs_pb2.py: graphdef/_proto/graph_pb2.py graphdef/_proto/meta_graph_pb2.py

# Generated sources are kept: as an intermediate of two pattern rules, make would delete them
# after each build and the next build would regenerate them and recompile everything.
.SECONDARY: $(CC_GEN)
# order-only: a Makefile edit re-checks the system packages without regenerating and recompiling everything
$(GEN_CC)/%.pb.cc: proto/%.proto | $(BUILD)/.sysdeps
	@mkdir -p $(GEN_CC)
	protoc -Iproto --cpp_out=$(GEN_CC) $<

# One object per source, with the headers each includes tracked (-MMD), so a change
# recompiles only what it touches and `make -j` uses every core.
OBJ := $(BUILD)/obj
CORE_OBJ := $(patsubst %.cc,$(OBJ)/%.o,$(CORE_SRC) $(CC_GEN:$(BUILD)/%=%))
CLI_OBJ := $(patsubst %.cc,$(OBJ)/%.o,$(CLI_SRC))
CAPI_OBJ := $(patsubst %.cc,$(OBJ)/%.o,$(CAPI_SRC))
# The core, compiled once (position-independent) for both clients. Linked whole: kernels and graph
# passes register themselves from static initializers that nothing else references.
CORE_LIB := $(BUILD)/libgraphrun_core.a
CORE_LINK = -Wl,--whole-archive $(CORE_LIB) -Wl,--no-whole-archive
PROTOBUF_FLAGS = $$(pkg-config --cflags protobuf)

NPROC := $(shell nproc 2>/dev/null || echo 2)

# Only the compile runs in parallel: the pip installs above must not race each other.
cc: $(BUILD)/.sysdeps $(ONEDNN_STAMP) ## build graphrun-cc and libgraphrun.so
	@$(MAKE) --no-print-directory -j$(NPROC) $(RUNNER) $(LIBGRAPHRUN)
	@$(MAKE) --no-print-directory native

# The package finds its native files inside itself (graphdef/_native/), where a wheel carries them;
# in a checkout they are links to build/ (an editable install sees a rebuild at once).
NATIVE := graphdef/_native
native: $(RUNNER) $(LIBGRAPHRUN)
	@ln -sfn ../../$(RUNNER) $(NATIVE)/graphrun-cc
	@ln -sfn ../../$(LIBGRAPHRUN) $(NATIVE)/libgraphrun.so
	@ln -sfn ../../$(ONEDNN)/lib/libdnnl.so.3 $(NATIVE)/libdnnl.so.3

$(CORE_LIB): $(CORE_OBJ)
	@rm -f $@
	$(AR) qcs $@ $(CORE_OBJ)

$(RUNNER): $(CLI_OBJ) $(CORE_LIB)
	$(CXX) $(CXXFLAGS) -o $@ $(CLI_OBJ) $(CORE_LINK) $$(pkg-config --libs protobuf) $(DNNL_LIBS) -lzip -lpthread \
	  -Wl,-rpath,'$$ORIGIN:$$ORIGIN/onednn/lib'

# Only graphrun_* is exported: the runner's C++ symbols stay inside, clashing with nothing a host
# process has loaded (another protobuf, another oneDNN).
$(LIBGRAPHRUN): $(CAPI_OBJ) $(CORE_LIB) runner/capi/exports.map
	$(CXX) $(CXXFLAGS) -shared -Wl,--version-script=runner/capi/exports.map -Wl,--no-undefined -o $@ $(CAPI_OBJ) \
	  $(CORE_LINK) \
	  $$(pkg-config --libs protobuf) $(DNNL_LIBS) -lzip -lpthread -Wl,-rpath,'$$ORIGIN:$$ORIGIN/onednn/lib'

# Objects are rebuilt when the compile flags change (an old non-PIC object cannot go into the library).
CXXFLAGS_STAMP := $(OBJ)/.cxxflags
$(CXXFLAGS_STAMP): FORCE
	@mkdir -p $(OBJ)
	@echo '$(CXX) $(CXXFLAGS)' | cmp -s - $@ || echo '$(CXX) $(CXXFLAGS)' > $@
.PHONY: FORCE

$(OBJ)/gen/%.o: $(GEN_CC)/%.cc $(CC_GEN) $(CXXFLAGS_STAMP) $(ONEDNN_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

$(OBJ)/runner/%.o: runner/%.cc $(CC_GEN) $(CXXFLAGS_STAMP) $(ONEDNN_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(PROTOBUF_FLAGS) -MMD -MP -c -o $@ $<

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CAPI_OBJ:.o=.d)

# Fuzzing (fuzz/README.md): the C++ runner under ASan+UBSan, the Python runtime and graphrun serve's
# request paths; short runs for CI (fuzz-cc-run, fuzz-py-run, fuzz-serve-run), campaigns by hand.
include fuzz/fuzz.mk
include fuzz/py/fuzz_py.mk
include fuzz/serving/fuzz_serve.mk

# Distribution: the wheel (make wheel) and the C SDK (make sdk), in dist/ (packaging/).
include packaging/wheel.mk packaging/sdk.mk

# Developer tools: the documentation site (make docs) and the lint checks (make lint).
include tools/docs.mk tools/lint.mk

# Build models, save them, and run the same files in every runtime: the seed program, then
# seed 002's IQ models and a digits classifier, trained in the graph and frozen.
DEMO := $(BUILD)/demo
demo: setup $(VENV)/.demo ## build models, save them, run them in every runtime
	@mkdir -p $(DEMO)
	$(VPY) examples/seed.py $(DEMO)/seed.pb
	$(VENV)/bin/graphrun $(DEMO)/seed.pb
	$(RUNNER) $(DEMO)/seed.pb
	$(VPY) examples/iq.py $(DEMO)
	$(VENV)/bin/graphrun $(DEMO)/iq_linear.pb --feed x=17
	$(RUNNER) $(DEMO)/iq_linear.pb --feed x=17
	$(VENV)/bin/graphrun $(DEMO)/iq_quadratic.pb --feed x=17
	$(RUNNER) $(DEMO)/iq_quadratic.pb --feed x=17
	$(VPY) examples/digits.py $(DEMO)
	$(VENV)/bin/graphrun $(DEMO)/digits.pb --feed images=@$(DEMO)/digits_sample.npy --fetch classes

# sdk: tests/packaging/test_sdk.py compiles the C example against the SDK's tarball.
test: setup $(VENV)/.oracles $(VENV)/.demo sdk ## the whole test suite
	$(VPY) -m pytest -q tests

# The suite again as CPUs without AVX-512 or AVX2 would run it (tests/support/cpu_profiles.py);
# PROFILES=no-avx2 picks one.
test-profiles: setup $(VENV)/.oracles $(VENV)/.demo sdk ## the suite as CPUs without AVX-512 or AVX2 run it (PROFILES=...)
	$(VPY) -m tests.support.cpu_profiles $(PROFILES)

$(VENV)/.bench: $(VENV)/.oracles pyproject.toml
	$(VPY) -m pip install -q -e '.[bench]'
	@touch $@

bench: setup $(VENV)/.bench ## every benchmark in benchmarks/, peers side by side
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(VPY) $$f || exit 1; done

# Regenerate the committed TensorFlow-made models and TF1 transcripts (needs TensorFlow).
tf-fixtures: setup $(VENV)/.oracles ## regenerate the TensorFlow-made test models
	$(VPY) -m tests.tf_models.generate
	$(VPY) -m tests.tf1_programs --write

clean: ## remove build/ and generated code
	rm -rf $(BUILD) graphdef/_proto/*_pb2.py
