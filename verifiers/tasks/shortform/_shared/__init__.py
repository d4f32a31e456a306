"""Helpers the short-form task modules share, named by concept (task modules never import each other)."""
