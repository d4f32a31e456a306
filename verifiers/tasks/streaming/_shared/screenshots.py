"""Screenshots the OBS observer records (GetSourceScreenshot imageData): decoding, shared by T09 and T12."""

from __future__ import annotations

import base64
from typing import Any

import cv2
import numpy as np


def decode_data_uri(uri: Any) -> np.ndarray | None:
    """data:image/png;base64,... -> RGB array (None when it is not an image)."""
    if not isinstance(uri, str) or "," not in uri:
        return None
    try:
        raw = base64.b64decode(uri.split(",", 1)[1], validate=False)
    except ValueError:
        return None
    img = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    return None if img is None else img[:, :, ::-1]
