# The documentation site (docs/, mkdocs.yml): filled in by the docs work.
