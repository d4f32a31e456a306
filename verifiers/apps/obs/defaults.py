"""OBS's default settings for the source/filter/encoder kinds the streaming tasks use.

OBS saves only settings that differ from the defaults, so `{"db": 6.0}` is a whole gain filter and
a compressor saved as `{}` has ratio 10. Verifiers must read effective values, hence this table.
Values come from each plugin's `*_defaults()` in obs-studio (tag 29.0.2 unless noted); keys are
`versioned_id` (the id OBS instantiates; e.g. noise_suppress_filter_v2). Kinds not listed simply
get no defaults (their absent keys stay absent).
"""

from __future__ import annotations

from typing import Any

SOURCE_DEFAULTS: dict[str, dict[str, Any]] = {
    # sources
    "color_source": {"color": 0xFFFFFFFF, "width": 400, "height": 400},
    "color_source_v2": {"color": 0xFFFFFFFF, "width": 1920, "height": 1080},
    "color_source_v3": {"color": 0xFFD1D1D1, "width": 1920, "height": 1080},
    "image_source": {"unload": False, "linear_alpha": False},
    "ffmpeg_source": {"is_local_file": True, "looping": False, "clear_on_media_end": True,
                      "restart_on_activate": True, "linear_alpha": False, "reconnect_delay_sec": 10,
                      "buffering_mb": 2, "speed_percent": 100, "log_changes": True},
    "text_ft2_source_v2": {"font": {"face": "Sans Serif", "size": 256, "flags": 0, "style": ""},
                           "antialiasing": True, "word_wrap": False, "outline": False,
                           "drop_shadow": False, "log_lines": 6, "color1": 0xFFFFFFFF,
                           "color2": 0xFFFFFFFF},
    # audio filters
    "gain_filter": {"db": 0.0},
    "compressor_filter": {"ratio": 10.0, "threshold": -18.0, "attack_time": 6, "release_time": 60,
                          "output_gain": 0.0, "sidechain_source": "none"},
    "limiter_filter": {"threshold": -6.0, "release_time": 60},
    "noise_gate_filter": {"open_threshold": -26.0, "close_threshold": -32.0, "attack_time": 25,
                          "hold_time": 200, "release_time": 150},
    # v1 defaults to speex on builds with speexdsp (Debian's does); v2 to rnnoise
    "noise_suppress_filter": {"suppress_level": -30, "method": "speex"},
    "noise_suppress_filter_v2": {"suppress_level": -30, "method": "rnnoise"},
    "expander_filter": {"presets": "expander", "ratio": 2.0, "threshold": -40.0, "attack_time": 10,
                        "release_time": 50, "output_gain": 0.0, "detector": "RMS"},
    # video filters
    "chroma_key_filter": {"opacity": 100, "contrast": 0.0, "brightness": 0.0, "gamma": 0.0,
                          "key_color": 0x00FF00, "key_color_type": "green", "similarity": 400,
                          "smoothness": 80, "spill": 100},
    "chroma_key_filter_v2": {"opacity": 1.0, "contrast": 0.0, "brightness": 0.0, "gamma": 0.0,
                             "key_color": 0x00FF00, "key_color_type": "green", "similarity": 400,
                             "smoothness": 80, "spill": 100},
    "color_filter_v2": {"gamma": 0.0, "contrast": 0.0, "brightness": 0.0, "saturation": 0.0,
                        "hue_shift": 0.0, "opacity": 1.0, "color_multiply": 0x00FFFFFF,
                        "color_add": 0x00000000},
    "crop_filter": {"relative": True, "left": 0, "top": 0, "right": 0, "bottom": 0, "cx": 0, "cy": 0},
    "mask_filter_v2": {"type": "mask_color_filter.effect", "color": 0xFFFFFF, "opacity": 1.0},
    # transitions
    "obs_stinger_transition": {"hw_decode": True, "transition_point": 0, "tp_type": 0,
                               "track_matte_enabled": False, "audio_fade_style": 0,
                               "audio_monitoring": 0},
    # encoders (streamEncoder.json / recordEncoder.json); x264 bitrate was 2500 until OBS 30
    "obs_x264": {"bitrate": 2500, "use_bufsize": False, "buffer_size": 2500, "keyint_sec": 0,
                 "crf": 23, "vfr": False, "rate_control": "CBR", "preset": "veryfast", "profile": "",
                 "tune": ""},
}


def with_defaults(kind: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Effective settings: the kind's defaults overlaid with what was saved (nested dicts merged)."""
    return _merge(SOURCE_DEFAULTS.get(kind, {}), settings)


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out
