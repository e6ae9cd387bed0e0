# `make sdk`: dist/graphrun-c-<version>-linux-x86_64.tar.gz, the C API for C and C++ programs: the header,
# libgraphrun.so with every library it loads beside it (RUNPATH $ORIGIN), a relocatable pkg-config file and
# CMake package (graphrun::graphrun), the example examples/c/classify.c, and the bundled libraries'
# licenses. Included by the Makefile.

SDK_NAME := graphrun-c-$(VERSION)-linux-x86_64
SDK_STAGE := $(BUILD)/sdk/$(SDK_NAME)
SDK := $(DIST)/$(SDK_NAME).tar.gz
SDK_TEMPLATES := packaging/templates

# tests/packaging/test_sdk.py builds the example with CMake.
$(BUILD)/.sdk-sysdeps:
	@mkdir -p $(BUILD)
	$(call install_packages,the C SDK's test,cmake)
	@touch $@

sdk: cc $(VENV)/.wheel-tools $(BUILD)/.sdk-sysdeps $(ONEDNN_NOTICES)/.done ## the C SDK tarball in dist/
	rm -rf $(BUILD)/sdk && mkdir -p $(SDK_STAGE)/include $(SDK_STAGE)/lib/pkgconfig \
	  $(SDK_STAGE)/lib/cmake/graphrun $(SDK_STAGE)/examples/c $(DIST)
	cp runner/capi/graphrun_c.h $(SDK_STAGE)/include/
	$(VPY) packaging/bundle.py --licenses $(SDK_STAGE)/licenses $(SDK_STAGE)/lib $(LIBGRAPHRUN)
	cp $(ONEDNN_NOTICES)/*.txt $(SDK_STAGE)/licenses/
	sed 's/@VERSION@/$(VERSION)/' $(SDK_TEMPLATES)/graphrun.pc.in > $(SDK_STAGE)/lib/pkgconfig/graphrun.pc
	for f in graphrun-config graphrun-config-version; do \
	  sed 's/@VERSION@/$(VERSION)/' $(SDK_TEMPLATES)/$$f.cmake.in > $(SDK_STAGE)/lib/cmake/graphrun/$$f.cmake; done
	cp examples/c/classify.c examples/c/CMakeLists.txt $(SDK_STAGE)/examples/c/
	tar -C $(BUILD)/sdk --owner=0 --group=0 -czf $(SDK) $(SDK_NAME)
	@echo "$(SDK): $$(du -h $(SDK) | cut -f1)"; tar -tzvf $(SDK) | awk '{print "  " $$3 "\t" $$6}'
