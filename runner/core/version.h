// graphrun-cc's version, printed by --version.
#pragma once

namespace graphrun {

// The project's one version number. Its other place is the `version` field
// in pyproject.toml, which Python's graphrun reports; change both together
// (tests/cc/test_cli.py checks that they agree).
constexpr const char kVersion[] = "0.1.0";

}  // namespace graphrun
