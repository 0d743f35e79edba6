#!/usr/bin/env python3
"""Writes the reference .npy files of tests/test_cli_run_specs.c without numpy: each header is
spelled out as numpy.lib.format writes it (sorted keys, 21 - len(repr(shape[0])) spaces of room
to grow the first axis, padded with spaces to a multiple of 64 bytes and ended by a newline),
so the C writer's bytes are compared with an independent spelling. Bad files (big-endian,
Fortran order, structured, truncated, lying shapes) test the reader's refusals.
Run it from this folder: python3 make_refs.py"""
import struct


def header(descr, fortran, shape, version=1, grow=True):
    d = "{'descr': %r, 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False",
        "(%s)" % ("%d," % shape[0] if len(shape) == 1 else ", ".join(str(s) for s in shape)))
    if grow and shape:
        d += " " * (21 - len(repr(shape[0])))
    size = 4 if version >= 2 else 2
    pad = 64 - (6 + 2 + size + len(d) + 1) % 64
    d = d + " " * pad + "\n"
    return b"\x93NUMPY" + bytes([version, 0]) + len(d).to_bytes(size, "little") + d.encode()


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


# Good files: what numpy.save writes for these arrays.
write("f32_3.npy", header("<f4", False, (3,)) + struct.pack("<3f", 1.5, -2.0, 0.25))
write("i64_2x3.npy", header("<i8", False, (2, 3)) +
      struct.pack("<6q", 0, -1, 2**63 - 1, -2**63, 7, 549755289600))
write("u64_2.npy", header("<u8", False, (2,)) + struct.pack("<2Q", 2**64 - 1, 1))
write("u8_4.npy", header("|u1", False, (4,)) + bytes([0, 1, 254, 255]))
write("f16_2.npy", header("<f2", False, (2,)) + struct.pack("<2e", 1.5, -65504.0))
write("f64_0d.npy", header("<f8", False, ()) + struct.pack("<d", 0.1))
# A version 2.0 header (numpy writes one when the header passes 65535 bytes; readers take any).
write("f64_v2.npy", header("<f8", False, (2,), version=2) + struct.pack("<2d", 1e300, -0.0))
# Bad files.
write("bad_big_endian.npy", header(">f4", False, (2,)) + struct.pack(">2f", 1, 2))
write("bad_fortran.npy", header("<f4", True, (2, 2)) + struct.pack("<4f", 1, 2, 3, 4))
write("bad_truncated.npy", header("<f4", False, (8,)) + struct.pack("<3f", 1, 2, 3))
write("bad_extra.npy", header("<f4", False, (2,)) + struct.pack("<3f", 1, 2, 3))
write("bad_huge_shape.npy", header("<f4", False, (2**40, 2**40)) + struct.pack("<f", 1))
write("bad_overflow_shape.npy", header("<f8", False, (2**63, 4)) + struct.pack("<d", 1))
write("bad_structured.npy",
      b"\x93NUMPY\x01\x00" + (lambda d: len(d).to_bytes(2, "little") + d)(
          (lambda s: s + " " * (64 - (10 + len(s) + 1) % 64) + "\n")(
              "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }").encode())
      + struct.pack("<f", 1))
write("bad_header_len.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
write("bad_magic.npy", b"PK\x03\x04 this is a zip, not an array" * 4)
write("bad_short.npy", b"\x93NUMPY\x01")
d = "{'descr': '<f4', 'shape': (2,), }"
d = d + " " * (64 - (10 + len(d) + 1) % 64) + "\n"
write("bad_dict.npy", b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode() +
      struct.pack("<2f", 1, 2))
