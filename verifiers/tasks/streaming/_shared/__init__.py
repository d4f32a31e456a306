"""Streaming helpers shared by several task scorers, named by concept (task modules never import each other)."""
