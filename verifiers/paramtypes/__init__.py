"""Typed check params per family (see verifiers/params.py); imported by the catalog loader."""
