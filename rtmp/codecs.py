"""Codec facts from the bitstream: FLV/Enhanced-RTMP tag headers, AVC SPS, AAC AudioSpecificConfig.

Width/height/profile/level come from the SPS and sample rate/channels from the
AudioSpecificConfig, never from onMetaData (which states the publisher's *configuration*).
"""

from __future__ import annotations

from dataclasses import dataclass

from rtmp.errors import CodecError

# Legacy FLV video codec ids and audio sound formats.
_VIDEO_CODECS = {2: "h263", 3: "screen", 4: "vp6", 5: "vp6a", 6: "screen2", 7: "h264", 12: "hevc"}
_AUDIO_CODECS = {0: "pcm", 1: "adpcm", 2: "mp3", 3: "pcm_le", 4: "nellymoser16", 5: "nellymoser8",
                 6: "nellymoser", 7: "g711a", 8: "g711u", 10: "aac", 11: "speex", 14: "mp3_8k"}
#: Enhanced RTMP FourCCs (video and audio).
_FOURCC = {b"avc1": "h264", b"hvc1": "hevc", b"av01": "av1", b"vp09": "vp9", b"vp08": "vp8",
           b"Opus": "opus", b"mp4a": "aac", b"fLaC": "flac", b"ac-3": "ac3", b"ec-3": "eac3", b".mp3": "mp3"}
_FLV_RATES_HZ = (5512, 11025, 22050, 44100)
_AAC_RATES_HZ = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350)
_AAC_OBJECTS = {1: "Main", 2: "LC", 3: "SSR", 4: "LTP", 5: "HE-AAC (SBR)", 6: "Scalable", 23: "LD",
                29: "HE-AACv2 (PS)", 39: "ELD"}
_AVC_PROFILES = {66: "Baseline", 77: "Main", 88: "Extended", 100: "High", 110: "High 10",
                 122: "High 4:2:2", 244: "High 4:4:4 Predictive", 44: "CAVLC 4:4:4"}
_HIGH_PROFILES = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135}


@dataclass(slots=True)
class VideoTag:
    codec: str
    keyframe: bool
    sequence_header: bool
    cts_ms: int           # composition offset (signed 24-bit); 0 when the format has none
    payload_offset: int   # where the codec payload (config record or frames) starts
    enhanced: bool = False
    end_of_sequence: bool = False  # AVC packet type 2 / SequenceEnd: not a frame


@dataclass(slots=True)
class AudioTag:
    codec: str
    sequence_header: bool
    payload_offset: int
    flv_rate_hz: int
    flv_channels: int


def parse_video_tag(body: bytes) -> VideoTag:
    if not body:
        raise CodecError("empty video message")
    b0 = body[0]
    if b0 & 0x80:
        # Enhanced RTMP: [IsExHeader:1][FrameType:3][PacketType:4] + FourCC.
        if len(body) < 5:
            raise CodecError("enhanced video header truncated")
        frame_type = (b0 >> 4) & 0x07
        packet_type = b0 & 0x0F
        if packet_type == 6:
            # Multitrack (OBS 30+ with several encoders): track layout follows; not split here.
            return VideoTag("multitrack", frame_type == 1, False, 0, 1, enhanced=True)
        codec = _FOURCC.get(bytes(body[1:5]), "fourcc:" + bytes(body[1:5]).hex())
        cts = 0
        off = 5
        if packet_type == 1 and codec in ("hevc", "h264"):
            if len(body) < 8:
                raise CodecError("enhanced coded frame truncated")
            cts = _si24(body, 5)
            off = 8
        return VideoTag(codec, frame_type == 1, packet_type == 0, cts, off, enhanced=True,
                        end_of_sequence=packet_type == 2)
    frame_type = b0 >> 4
    codec_id = b0 & 0x0F
    codec = _VIDEO_CODECS.get(codec_id, f"flv:{codec_id}")
    if codec_id in (7, 12):
        if len(body) < 5:
            raise CodecError("AVC video header truncated")
        return VideoTag(codec, frame_type == 1, body[1] == 0, _si24(body, 2), 5, end_of_sequence=body[1] == 2)
    return VideoTag(codec, frame_type == 1, False, 0, 1)


def parse_audio_tag(body: bytes) -> AudioTag:
    if not body:
        raise CodecError("empty audio message")
    b0 = body[0]
    fmt = b0 >> 4
    rate = _FLV_RATES_HZ[(b0 >> 2) & 3]
    channels = 2 if b0 & 1 else 1
    if fmt == 9:
        # Enhanced RTMP audio: [SoundFormat=9][AudioPacketType:4] + FourCC.
        if len(body) < 5:
            raise CodecError("enhanced audio header truncated")
        codec = _FOURCC.get(bytes(body[1:5]), "fourcc:" + bytes(body[1:5]).hex())
        return AudioTag(codec, (b0 & 0x0F) == 0, 5, rate, channels)
    codec = _AUDIO_CODECS.get(fmt, f"flv:{fmt}")
    if fmt == 10:
        if len(body) < 2:
            raise CodecError("AAC audio header truncated")
        return AudioTag(codec, body[1] == 0, 2, rate, channels)
    return AudioTag(codec, False, 1, rate, channels)


def _si24(b: bytes, off: int) -> int:
    v = (b[off] << 16) | (b[off + 1] << 8) | b[off + 2]
    return v - (1 << 24) if v & 0x800000 else v


class BitReader:
    """MSB-first bit reader with Exp-Golomb codes, over an RBSP (emulation bytes removed)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def u(self, n: int) -> int:
        v = 0
        for _ in range(n):
            byte = self.pos >> 3
            if byte >= len(self.data):
                raise CodecError("bitstream truncated")
            v = (v << 1) | ((self.data[byte] >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return v

    def ue(self) -> int:
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 31:
                raise CodecError("Exp-Golomb code too long")
        return (1 << zeros) - 1 + self.u(zeros)

    def se(self) -> int:
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


def unescape_rbsp(nal: bytes) -> bytes:
    """Remove emulation-prevention bytes (00 00 03 → 00 00)."""
    out = bytearray()
    zeros = 0
    for b in nal:
        if zeros >= 2 and b == 3:
            zeros = 0
            continue
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


@dataclass(slots=True)
class VideoConfig:
    """What a video decoder configuration record (AVC or HEVC) says of its first SPS."""

    profile_idc: int
    profile: str
    level: float
    width_px: int
    height_px: int
    chroma_format_idc: int


@dataclass(slots=True)
class AvcConfig(VideoConfig):
    nal_length_size: int  # bytes of each NAL unit's length prefix in the frames


def parse_avc_config(record: bytes) -> AvcConfig:
    """AVCDecoderConfigurationRecord → the first SPS's profile, level and cropped size."""
    if len(record) < 8 or record[0] != 1:
        raise CodecError("not an AVCDecoderConfigurationRecord")
    nal_length_size = (record[4] & 3) + 1
    n_sps = record[5] & 0x1F
    if n_sps < 1:
        raise CodecError("AVC config has no SPS")
    sps_len = int.from_bytes(record[6:8], "big")
    sps = record[8:8 + sps_len]
    if len(sps) != sps_len or sps_len < 4:
        raise CodecError("AVC SPS truncated")
    cfg = parse_avc_sps(sps)
    cfg.nal_length_size = nal_length_size
    return cfg


def parse_avc_sps(nal: bytes) -> AvcConfig:
    if (nal[0] & 0x1F) != 7:
        raise CodecError("NAL unit is not an SPS")
    r = BitReader(unescape_rbsp(nal[1:]))
    profile_idc = r.u(8)
    constraints = r.u(8)
    level_idc = r.u(8)
    r.ue()  # seq_parameter_set_id
    chroma_format_idc = 1
    separate_planes = 0
    if profile_idc in _HIGH_PROFILES:
        chroma_format_idc = r.ue()
        if chroma_format_idc > 3:
            raise CodecError("bad chroma_format_idc")
        if chroma_format_idc == 3:
            separate_planes = r.u(1)
        r.ue()  # bit_depth_luma_minus8
        r.ue()  # bit_depth_chroma_minus8
        r.u(1)  # qpprime_y_zero_transform_bypass_flag
        if r.u(1):  # seq_scaling_matrix_present_flag
            for i in range(8 if chroma_format_idc != 3 else 12):
                if r.u(1):
                    _skip_scaling_list(r, 16 if i < 6 else 64)
    r.ue()  # log2_max_frame_num_minus4
    poc_type = r.ue()
    if poc_type == 0:
        r.ue()
    elif poc_type == 1:
        r.u(1)
        r.se()
        r.se()
        n = r.ue()
        if n > 255:
            raise CodecError("bad num_ref_frames_in_pic_order_cnt_cycle")
        for _ in range(n):
            r.se()
    r.ue()  # max_num_ref_frames
    r.u(1)  # gaps_in_frame_num_value_allowed_flag
    width_mbs = r.ue() + 1
    height_map_units = r.ue() + 1
    frame_mbs_only = r.u(1)
    if not frame_mbs_only:
        r.u(1)  # mb_adaptive_frame_field_flag
    r.u(1)  # direct_8x8_inference_flag
    crop = (0, 0, 0, 0)
    if r.u(1):
        crop = (r.ue(), r.ue(), r.ue(), r.ue())
    if chroma_format_idc == 0 or separate_planes:
        crop_x, crop_y = 1, 2 - frame_mbs_only
    else:
        sub_w = 1 if chroma_format_idc == 3 else 2
        sub_h = 2 if chroma_format_idc == 1 else 1
        crop_x, crop_y = sub_w, sub_h * (2 - frame_mbs_only)
    width = width_mbs * 16 - crop_x * (crop[0] + crop[1])
    height = (2 - frame_mbs_only) * height_map_units * 16 - crop_y * (crop[2] + crop[3])
    if width <= 0 or height <= 0:
        raise CodecError("SPS cropping leaves no picture")
    profile = _AVC_PROFILES.get(profile_idc, f"profile {profile_idc}")
    if profile_idc == 66 and constraints & 0x40:
        profile = "Constrained Baseline"
    level = 1.1 if level_idc == 11 and constraints & 0x10 and profile_idc in (66, 77, 88) else level_idc / 10
    return AvcConfig(profile_idc, profile, level, width, height, chroma_format_idc, 4)


def _skip_scaling_list(r: BitReader, size: int) -> None:
    last = nxt = 8
    for _ in range(size):
        if nxt:
            nxt = (last + r.se() + 256) % 256
        last = nxt or last


@dataclass(slots=True)
class AacConfig:
    object_type: int
    object_name: str
    sample_rate_hz: int
    channels: int
    sbr: bool  # explicitly signalled SBR: the output rate is twice the core rate


def parse_aac_config(asc: bytes) -> AacConfig:
    """AudioSpecificConfig (ISO 14496-3): object type, core sample rate, channel configuration."""
    r = BitReader(bytes(asc))

    def object_type() -> int:
        ot = r.u(5)
        return 32 + r.u(6) if ot == 31 else ot

    def rate() -> int:
        idx = r.u(4)
        if idx == 15:
            return r.u(24)
        if idx >= len(_AAC_RATES_HZ):
            raise CodecError(f"reserved AAC sample rate index {idx}")
        return _AAC_RATES_HZ[idx]

    ot = object_type()
    sample_rate = rate()
    channel_cfg = r.u(4)
    sbr = False
    if ot in (5, 29):
        sbr = True
        sample_rate = rate()  # extension (output) rate
        ot = object_type()
    channels = {0: 0, 7: 8}.get(channel_cfg, channel_cfg if channel_cfg <= 6 else 0)
    if sample_rate <= 0:
        raise CodecError("AAC sample rate 0")
    return AacConfig(ot, _AAC_OBJECTS.get(ot, f"object {ot}"), sample_rate, channels, sbr)


_HEVC_PROFILES = {1: "Main", 2: "Main 10", 3: "Main Still Picture", 4: "Range Extensions"}


@dataclass(slots=True)
class HevcConfig(VideoConfig):
    """hvcC's first SPS (the frames' length prefix is not read: HEVC frames are only counted)."""


def parse_hevc_config(record: bytes) -> HevcConfig:
    """HEVCDecoderConfigurationRecord (hvcC) → the first SPS's profile, level and cropped size."""
    if len(record) < 23 or record[0] != 1:
        raise CodecError("not an HEVCDecoderConfigurationRecord")
    pos = 22
    n_arrays = record[pos]
    pos += 1
    for _ in range(n_arrays):
        if pos + 3 > len(record):
            break
        nal_type = record[pos] & 0x3F
        n_nalus = int.from_bytes(record[pos + 1:pos + 3], "big")
        pos += 3
        for _ in range(n_nalus):
            size = int.from_bytes(record[pos:pos + 2], "big")
            nal = record[pos + 2:pos + 2 + size]
            pos += 2 + size
            if len(nal) != size:
                raise CodecError("hvcC NAL unit truncated")
            if nal_type == 33:
                return parse_hevc_sps(nal)
    raise CodecError("hvcC has no SPS")


def parse_hevc_sps(nal: bytes) -> HevcConfig:
    if len(nal) < 3 or (nal[0] >> 1) & 0x3F != 33:
        raise CodecError("NAL unit is not an HEVC SPS")
    r = BitReader(unescape_rbsp(nal[2:]))
    r.u(4)  # sps_video_parameter_set_id
    max_sub_layers_minus1 = r.u(3)
    r.u(1)  # sps_temporal_id_nesting_flag
    # profile_tier_level(1, max_sub_layers_minus1)
    r.u(2)  # general_profile_space
    r.u(1)  # general_tier_flag
    profile_idc = r.u(5)
    r.u(32)  # compatibility flags
    r.u(48)  # progressive/interlaced/non-packed/frame-only + 43 reserved/constraint bits + 1
    level_idc = r.u(8)
    sub_profile = []
    sub_level = []
    for _ in range(max_sub_layers_minus1):
        sub_profile.append(r.u(1))
        sub_level.append(r.u(1))
    if max_sub_layers_minus1 > 0:
        for _ in range(max_sub_layers_minus1, 8):
            r.u(2)
    for i in range(max_sub_layers_minus1):
        if sub_profile[i]:
            r.u(88)
        if sub_level[i]:
            r.u(8)
    r.ue()  # sps_seq_parameter_set_id
    chroma_format_idc = r.ue()
    if chroma_format_idc > 3:
        raise CodecError("bad chroma_format_idc")
    separate = r.u(1) if chroma_format_idc == 3 else 0
    width = r.ue()
    height = r.ue()
    if r.u(1):  # conformance_window_flag
        left, right, top, bottom = r.ue(), r.ue(), r.ue(), r.ue()
        sub_w = 2 if chroma_format_idc in (1, 2) and not separate else 1
        sub_h = 2 if chroma_format_idc == 1 and not separate else 1
        width -= sub_w * (left + right)
        height -= sub_h * (top + bottom)
    if width <= 0 or height <= 0:
        raise CodecError("HEVC SPS leaves no picture")
    return HevcConfig(profile_idc, _HEVC_PROFILES.get(profile_idc, f"profile {profile_idc}"), level_idc / 30,
                      width, height, chroma_format_idc)
