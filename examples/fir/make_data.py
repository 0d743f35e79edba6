#!/usr/bin/env python3
"""Writes the data of the fir example without numpy: x.npy (1024 float32 samples of a
chirp), taps.npy (16 float32 taps of a smoothing window) and y_ref.npy (the filter's output
computed here in double precision, rounded to float32), as numpy.save would write them.
Usage: make_data.py [DIR] [GAIN] [BIAS] [N]"""
import math
import struct
import sys


def save(path, values, fmt="f"):
    descr = {"f": "<f4", "d": "<f8"}[fmt]
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    d += " " * (21 - len(str(len(values))))
    d += " " * (64 - (10 + len(d) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


out = sys.argv[1] if len(sys.argv) > 1 else "."
gain = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
bias = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
n = int(sys.argv[4]) if len(sys.argv) > 4 else 1024
x = [f32(math.sin(0.002 * i * i)) for i in range(n)]
w = [math.sin(math.pi * (k + 0.5) / 16) for k in range(16)]
taps = [f32(v / sum(w)) for v in w]
y = [f32(f32(gain) * sum(taps[k] * x[i - k] for k in range(16) if i - k >= 0) + bias)
     for i in range(n)]
save(out + "/x.npy", x)
save(out + "/taps.npy", taps)
save(out + "/y_ref.npy", y)
