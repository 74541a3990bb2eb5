#!/usr/bin/env python3
"""Small seeds for the container targets: a container file with its metadata emptied.

    scripts/fuzz_seeds.py IN OUT [META]

Reads a .hps/.hcfm/.hoct/.hsmp file (formats/container.md), replaces the payload of its "meta"
section by META (default "{}"), and writes OUT with every size, CRC-32, the section count and the
file size recomputed. A padding section ("pad:NAME", zero bytes) is resized so that the section
after it starts at the same alignment as before (64 bytes in a .hsmp). The readers behind the gate
take the metadata as it is, so the seed still reads; the fuzzer then spends its mutations on the
sections the parsers check, not on a kilobyte of JSON.
"""
import struct
import sys
import zlib

HEADER, SECTION_HEADER, NAME = 40, 32, 16


def sections(data):
    if data[:8] != b"HAPTICPF" or len(data) < HEADER:
        sys.exit("fuzz_seeds: not a hapticprep container file")
    count = struct.unpack_from("<I", data, 24)[0]
    at, out = HEADER, []
    for _ in range(count):
        name = data[at:at + NAME].split(b"\0")[0]
        size = struct.unpack_from("<Q", data, at + 16)[0]
        out.append((name, data[at + SECTION_HEADER:at + SECTION_HEADER + size]))
        at += SECTION_HEADER + size
    return data[8:16], out  # version and kind tag, sections


def serialize(version_kind, parts):
    total = HEADER + sum(SECTION_HEADER + len(p) for _, p in parts)
    head = b"HAPTICPF" + version_kind + struct.pack("<QII", total, len(parts), 0)
    out = head + struct.pack("<II", zlib.crc32(head), 0)
    for name, payload in parts:
        sh = name.ljust(NAME, b"\0") + struct.pack("<QI", len(payload), zlib.crc32(payload))
        out += sh + struct.pack("<I", zlib.crc32(sh)) + payload
    return out


def repad(parts, align=64):
    """Resizes each "pad:" section so that the payload after it starts at a multiple of `align`."""
    at, out = HEADER, []
    for name, payload in parts:
        if name.startswith(b"pad:"):
            payload = b"\0" * ((-(at + 2 * SECTION_HEADER)) % align)
        out.append((name, payload))
        at += SECTION_HEADER + len(payload)
    return out


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    meta = (argv[3] if len(argv) == 4 else "{}").encode()
    with open(argv[1], "rb") as f:
        version_kind, parts = sections(f.read())
    parts = repad([(n, meta if n == b"meta" else p) for n, p in parts])
    with open(argv[2], "wb") as f:
        f.write(serialize(version_kind, parts))


if __name__ == "__main__":
    main(sys.argv)
