"""Headless OBS Studio for tests and demos (see launcher.py)."""

from monitor.obs.launcher import ObsInstance, ObsLaunchError, free_tcp_port

__all__ = ["ObsInstance", "ObsLaunchError", "free_tcp_port"]
