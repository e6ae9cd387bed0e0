# The documentation site: docs/ and mkdocs.yml, built with mkdocs-material (the `docs` extra) into
# build/site. Strict, so a broken link, a page missing from the nav or a missing page fails the build.
.PHONY: docs

$(VENV)/.docs: $(VENV)/.installed pyproject.toml
	$(VPY) -m pip install -q -e '.[docs]'
	@touch $@

# NO_MKDOCS_2_WARNING: mkdocs-material's banner about its successor, printed on every build.
docs: $(VENV)/.docs ## build the documentation site into build/site
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir $(BUILD)/site
