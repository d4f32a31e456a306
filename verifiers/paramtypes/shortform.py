"""Params dataclasses of the shortform checks (catalog: verifiers/catalog/shortform.yaml); see verifiers/params.py.

One frozen dataclass per converted check that has params, registered with @params_type(task, check).
"""

from __future__ import annotations
