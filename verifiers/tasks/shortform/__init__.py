"""Verifiers for the short-form & template editing family (R06.04.01.04-T01 … T20)."""
