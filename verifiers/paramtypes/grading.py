"""Params dataclasses of the grading checks (catalog: verifiers/catalog/grading.yaml); see verifiers/params.py.

One frozen dataclass per converted check that has params, registered with @params_type(task, check).
"""

from __future__ import annotations
