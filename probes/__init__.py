"""Streaming probes: live audio/video measurement from sound cards, live streams, screenshots, files.

Sources (probes.sources.*) yield AudioBlock/VideoFrame items; probes (AudioProbe, VideoProbe,
AvSyncProbe) turn them into events through an `emit(source, kind, payload)` callable; detectors
(probes.detectors.*) are pure. See docs/probes.md.
"""
