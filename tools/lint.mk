# Lint and format checks: ruff for the Python (its rules in pyproject.toml) and clang-format for the
# C and C++ (.clang-format). Both come pinned with the dev extra, so every machine checks alike.
.PHONY: lint format

# Every tracked C and C++ file, less vendored code (runner/third_party), to xargs -r: with no
# file (outside a git checkout) clang-format would read stdin instead.
LINT_CC = git ls-files '*.cc' '*.h' '*.c' '*.cpp' | grep -v '^runner/third_party/' | xargs -r

lint: $(VENV)/.installed ## ruff and clang-format checks (no changes)
	$(VENV)/bin/ruff check .
	$(LINT_CC) $(VENV)/bin/clang-format --dry-run -Werror

format: $(VENV)/.installed ## apply ruff's fixes and clang-format in place
	$(VENV)/bin/ruff check --fix .
	$(LINT_CC) $(VENV)/bin/clang-format -i
