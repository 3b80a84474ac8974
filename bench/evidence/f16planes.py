# Byte-plane shuffle of an F16 safetensors file, so that xz compresses it better (the high bytes of
# f16 weights repeat far more than the low ones): `pack` writes [header length][header][all low bytes]
# [all high bytes], `unpack` restores the original file byte for byte.
# Usage: python3 f16planes.py pack|unpack SRC DST
import sys

mode, src, dst = sys.argv[1:4]
b = open(src, "rb").read()
if mode == "pack":
    n = int.from_bytes(b[:8], "little")
    head, data = b[: 8 + n], b[8 + n :]
    assert len(data) % 2 == 0, "tensor data of an F16 file has an even length"
    out = len(head).to_bytes(8, "little") + head + data[0::2] + data[1::2]
elif mode == "unpack":
    h = int.from_bytes(b[:8], "little")
    head, rest = b[8 : 8 + h], b[8 + h :]
    half = len(rest) // 2
    data = bytearray(len(rest))
    data[0::2], data[1::2] = rest[:half], rest[half:]
    out = head + bytes(data)
else:
    sys.exit("usage: f16planes.py pack|unpack SRC DST")
open(dst, "wb").write(out)
