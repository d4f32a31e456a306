"""Helpers shared by the sound task modules, one concept per module (task modules never import each other)."""
