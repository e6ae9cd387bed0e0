# Lint and format checks: filled in by the lint work.
