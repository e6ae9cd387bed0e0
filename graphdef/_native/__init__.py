"""Where the native runtime's files are: inside this package, in graphdef/_native/.

A wheel carries libgraphrun.so, the graphrun-cc executable and the libraries they load here; in a
source checkout `make cc` links its build outputs here. Nothing is looked for outside the package,
except where an environment variable names a file: GRAPHDEF_LIBGRAPHRUN (the library) and
GRAPHRUN_CC (the executable) override the bundled ones.
"""

import os
import sys
from importlib import resources
from pathlib import Path

LIBRARY = "libgraphrun.so"
EXECUTABLE = "graphrun-cc"
ENV_LIBRARY = "GRAPHDEF_LIBGRAPHRUN"
ENV_EXECUTABLE = "GRAPHRUN_CC"


def bundled(name):
    """The path of `name` inside this package (it may not exist: a checkout before `make cc`)."""
    return Path(str(resources.files(__name__).joinpath(name)))


def library_path():
    """libgraphrun.so: $GRAPHDEF_LIBGRAPHRUN, else the package's own."""
    return Path(os.environ[ENV_LIBRARY]) if os.environ.get(ENV_LIBRARY) else bundled(LIBRARY)


def executable_path():
    """graphrun-cc: $GRAPHRUN_CC, else the package's own."""
    return Path(os.environ[ENV_EXECUTABLE]) if os.environ.get(ENV_EXECUTABLE) else bundled(EXECUTABLE)


def how_to_get(what):
    """One line for a missing native file: which variable names it, or how to build it."""
    env = ENV_LIBRARY if what == LIBRARY else ENV_EXECUTABLE
    if os.environ.get(env):
        return f"${env} names {os.environ[env]}, which is not there"
    return (f"{what} is not in this installation of graphdef ({bundled(what).parent}): install a wheel "
            f"(`pip install graphdef-*.whl`, built by `make wheel`), or run `make cc` in a source checkout")


def run_graphrun_cc():
    """The `graphrun-cc` console script: replaces this process with the bundled executable."""
    path = executable_path()
    if not path.is_file():
        sys.exit(f"graphrun-cc: {how_to_get(EXECUTABLE)}")
    os.execv(path, [str(path), *sys.argv[1:]])
