"""Colour-grading family verifiers (R06.04.02.02-T01..T20)."""
