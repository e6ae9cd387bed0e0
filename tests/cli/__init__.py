"""graphrun's verbs, called in process and as a command."""
