#!/usr/bin/env python3
"""Where the bytes of a format-2 trace file go (formats/FORMAT.md, "Frames").

    bench/format_frames.py FILE [EVENTS]

Walks the frames of FILE and prints, per frame type: frames, bytes in the
file (frame heads, ext, stored payload, checksums), and the payload size
before compression (raw_len). With EVENTS (the file's event count, from
`atrace report --format=json`), also bytes per event for the EVENTS frames:
as stored (zstd) and as they would be without zstd (the varint-delta
encoding of the per-thread blocks alone, with the same frame overhead).
"""
import struct
import sys

NAMES = {1: "HEADER", 2: "STRINGS", 3: "PROBES", 4: "EVENTS", 5: "FOOTER", 6: "PROCESSES"}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    data = open(sys.argv[1], "rb").read()
    events = int(sys.argv[2]) if len(sys.argv) == 3 else 0
    if data[:8] != b"ATRACE\0\0":
        sys.exit("not an atrace trace file")
    major, minor = struct.unpack_from("<HH", data, 8)
    if major != 2:
        sys.exit(f"format {major}.{minor}: only format 2 has frames")
    stats = {}
    pos = 12
    while pos + 24 <= len(data) and data[pos:pos + 4] == b"ATFR":
        ftype, codec, ext_len, stored, raw = struct.unpack_from("<BBHII", data, pos + 4)
        size = 24 + ext_len + stored
        s = stats.setdefault(ftype, [0, 0, 0, 0, 0])  # frames, file bytes, raw, ext, zstd frames
        s[0] += 1
        s[1] += size
        s[2] += raw
        s[3] += ext_len
        s[4] += codec == 1
        pos += size
    tail = len(data) - pos
    print(f"format {major}.{minor}, {len(data)} bytes; trailer/unparsed {tail} bytes")
    print(f"{'frame':9} {'count':>8} {'zstd':>8} {'file bytes':>12} {'raw payload':>12}")
    for t in sorted(stats):
        n, size, raw, ext, z = stats[t]
        print(f"{NAMES.get(t, str(t)):9} {n:8} {z:8} {size:12} {raw:12}")
    if events and 4 in stats:
        n, size, raw, ext, z = stats[4]
        overhead = 24 * n + ext
        print(f"EVENTS bytes/event: stored {size / events:.3f}, "
              f"without zstd {(raw + overhead) / events:.3f} "
              f"(payload {raw / events:.3f} + block heads {overhead / events:.3f}); "
              f"events/block {events / n:.0f}; whole file {len(data) / events:.3f}")


if __name__ == "__main__":
    main()
