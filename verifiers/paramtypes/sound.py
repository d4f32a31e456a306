"""Params dataclasses of the sound checks (catalog: verifiers/catalog/sound.yaml); see verifiers/params.py.

One frozen dataclass per converted check that has params, registered with @params_type(task, check).
"""

from __future__ import annotations
