"""Hostile and invalid models: every runtime refuses them in one clear line."""
