"""The documentation stays true: README.md and the site's pages (docs/, mkdocs.yml) run as written."""
