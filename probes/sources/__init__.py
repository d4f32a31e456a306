"""Where audio blocks and video frames come from (devices, live streams, files, screenshots)."""
