#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz target (fuzz/seeds/TARGET/) from the committed test fixtures.

Deterministic: run it again after changing the fixtures or a target's input format, and commit the result.
"""
import pathlib
import shutil
import struct

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures"
SEEDS = HERE / "seeds"

# Small files covering each container and codec the operator reads.
VIDEOS = ["h264.mp4", "h264.ts", "h264_fragmented.mp4", "h264_moov_at_end.mp4", "h264.mkv", "hevc.hevc",
          "vp9_odd_35x19.webm", "av1.mkv", "mpeg4.avi", "res_change.h264", "hevc_10bit.mp4", "zero_frames.avi",
          # Display matrices (turned frames; 4:2:2 turned through RGB; one sent with the keyframes), a damaged start.
          "rotated_90.mp4", "transverse.mp4", "rotated_270_yuv422.mp4", "orientation_message.ts", "cut_start.ts"]
# Knob bytes (sequence length, batch size, policy, transform) cycled over the videos.
KNOBS = [bytes([3, 1, 0, 0]), bytes([7, 3, 1, 1]), bytes([1, 0, 1, 2]), bytes([4, 2, 0, 3])]


def live_chunks(data: bytes, size: int) -> bytes:
    """The live target's format: a length byte, then that many bytes, again and again."""
    out = bytearray()
    for i in range(0, len(data), size):
        piece = data[i:i + size]
        out.append(len(piece))
        out += piece
    return bytes(out)


def find(data: bytes, path: list) -> tuple:
    """Where the first box at the end of `path` (box types, walking containers) starts, and its size."""
    pos, end, found = 0, len(data), None
    for depth, kind in enumerate(path):
        found = None
        while pos + 8 <= end:
            size = struct.unpack(">I", data[pos:pos + 4])[0]
            if data[pos + 4:pos + 8] == kind:
                found = (pos, size)
                break
            pos += size
        assert found, kind
        pos, end = found[0] + 8, found[0] + found[1]
    return found


def put(data: bytearray, at: int, value: int) -> None:
    data[at:at + 4] = struct.pack(">I", value)


STBL = [b"moov", b"trak", b"mdia", b"minf", b"stbl"]


def forgeries() -> dict:
    """A few of the claims tests/container_claims.rs forges (each took 1-2.2 GB before the claims check)."""
    faststart = (FIXTURES / "h264.mp4").read_bytes()
    out = {}
    trun = bytearray((FIXTURES / "h264_fragmented.mp4").read_bytes())
    at, _ = find(trun, [b"moof", b"traf", b"trun"])
    put(trun, at + 8, 1)
    put(trun, at + 12, 80_000_000)
    out["forged_trun.mp4"] = bytes(trun)
    stsz = bytearray(faststart)
    at, _ = find(stsz, STBL + [b"stsz"])
    put(stsz, at + 12, 100)
    put(stsz, at + 16, 33_000_000)
    out["forged_stsz.mp4"] = bytes(stsz)
    out["forged_id3_stsz.mp4"] = b"ID3\x04\x00\x00\x00\x00\x00\x0a" + bytes(10) + bytes(stsz)
    overrun = bytearray(faststart)
    at, _ = find(overrun, STBL + [b"stsd"])
    put(overrun, at + 16, 0x80000100)
    out["forged_stsd.mp4"] = bytes(overrun)
    return out


def damaged() -> dict:
    """Damaged copies of the fixtures, as tests/damaged_videos.rs makes them (issue 60): bytes overwritten mid-stream,
    a run zeroed, a file cut short, MPEG-TS packets cut out, a damaged HEVC and VP9."""
    state = [7]

    def noise(n: int) -> bytes:
        out = bytearray()
        for _ in range(n):
            state[0] = (state[0] * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            out.append(state[0] >> 56)
        return bytes(out)

    def overwrite(name: str, at: float, n: int) -> bytes:
        data = bytearray((FIXTURES / name).read_bytes())
        start = int(len(data) * at)
        data[start:start + n] = noise(n)
        return bytes(data)

    mp4 = (FIXTURES / "damage_h264.mp4").read_bytes()
    zeroed = bytearray(mp4)
    zeroed[int(len(mp4) * 0.4):int(len(mp4) * 0.4) + 1500] = bytes(1500)
    ts = bytearray((FIXTURES / "h264.ts").read_bytes())
    cut = len(ts) // 2 // 188 * 188
    del ts[cut:cut + 2 * 188]
    hevc = bytearray((FIXTURES / "damage_hevc.mkv").read_bytes())
    hevc[int(len(hevc) * 0.65):int(len(hevc) * 0.65) + 64] = bytes(64)
    return {
        "damaged_overwritten.mp4": overwrite("damage_h264.mp4", 0.55, 400),
        "damaged_zeroed.mp4": bytes(zeroed),
        "damaged_cut_short.mp4": mp4[: len(mp4) * 3 // 4],
        "damaged_packets_cut.ts": bytes(ts),
        "damaged_hevc.mkv": bytes(hevc),
        "damaged_vp9.webm": overwrite("damage_vp9.webm", 0.45, 150),
    }


def main() -> None:
    shutil.rmtree(SEEDS, ignore_errors=True)
    for target in ["operator_whole", "operator_live", "mp4_sniffer", "service_request"]:
        (SEEDS / target).mkdir(parents=True)
    for i, name in enumerate(VIDEOS):
        data = (FIXTURES / name).read_bytes()
        knobs = KNOBS[i % len(KNOBS)]
        (SEEDS / "operator_whole" / name).write_bytes(knobs + data)
        (SEEDS / "operator_live" / name).write_bytes(knobs + live_chunks(data, [255, 100, 17][i % 3]))
        if name.endswith(".mp4"):
            (SEEDS / "mp4_sniffer" / name).write_bytes(data)
    for i, (name, data) in enumerate(sorted(damaged().items())):
        (SEEDS / "operator_whole" / name).write_bytes(KNOBS[i % len(KNOBS)] + data)
        (SEEDS / "operator_live" / name).write_bytes(KNOBS[i % len(KNOBS)] + live_chunks(data, 255))
    for i, (name, data) in enumerate(sorted(forgeries().items())):
        (SEEDS / "operator_whole" / name).write_bytes(KNOBS[i % len(KNOBS)] + data)
        (SEEDS / "operator_live" / name).write_bytes(KNOBS[i % len(KNOBS)] + live_chunks(data, 200))
        (SEEDS / "mp4_sniffer" / name).write_bytes(data)
    framing = [
        b"POST /videos?sequence_length=4 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        b"GET /health HTTP/1.1\r\nHost: a\r\n\r\n",
        b"POST /videos HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
        b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
    ]
    queries = [b"sequence_length=16&batch_size=4&policy=pad", b"sequence_length=65536&batch_size=65536",
               b"policy=partial&batch_size=%31", b"bogus=1&sequence_length=0"]
    tokens = [b"# clients\nalice:0123456789abcdef\nbob:fedcba9876543210\n"]
    seeds = [b"\x00\x10" + f for f in framing] + [b"\x01" + q for q in queries] + [b"\x02" + t for t in tokens]
    for i, seed in enumerate(seeds):
        (SEEDS / "service_request" / f"seed{i}").write_bytes(seed)


if __name__ == "__main__":
    main()
