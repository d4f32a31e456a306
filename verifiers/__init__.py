"""Task verifiers.

OpenCV reads its image pixel limit once, when cv2 is first imported; the scorer must decode agent
images under that limit (a 2.6 MB PNG declaring 30000×30000 pixels decoded to 5.5 GB), so it is
set here, before any verifier module can import cv2 (see verifiers/measure/safe_io.py).
"""

import os as _os

_os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", "50000000")  # = safe_io.MAX_IMAGE_PIXELS

from verifiers._blas import single_blas_thread as _single_blas_thread

_single_blas_thread()
