"""graphrun serve: real clients, and the server under trouble."""
