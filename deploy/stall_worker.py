#!/usr/bin/env python3
"""The workloads of deploy/stall-bench, each timing every operation it does.

  stall_worker.py loop DIR SECONDS OUT.json
      create + 300 KiB write + fsync + read back (checked) + unlink, over and over
  stall_worker.py list DIR SECONDS OUT.json
      `ls -l` of DIR (readdir + lstat of every entry) over and over
  stall_worker.py read FILE OUT.json
      one sequential read of FILE in 1 MiB reads (checked against its fill pattern)
  stall_worker.py fill FILE MIB
      writes FILE with the pattern `read` checks, fsynced

Each run writes {"ops": [[start_s, seconds, ok], ...], "errors": [...]} (times from the
worker's start, as CLOCK_MONOTONIC) and, for `read`, the bytes read. Exits 0 even when
operations failed: the driver judges.
"""
import json
import os
import sys
import time

PAYLOAD = 300 * 1024
CHUNK = 1 << 20


BASE = bytes((i * 131 + 7) % 251 for i in range(CHUNK))


def chunk(k):
    """The fill pattern's k-th MiB: its index, then a fixed block."""
    return k.to_bytes(8, "little") + BASE[8:]


def pattern(offset, length):
    """The fill pattern's bytes at `offset`."""
    out = bytearray()
    while length > 0:
        k, skip = divmod(offset, CHUNK)
        piece = chunk(k)[skip:skip + length]
        out += piece
        offset += len(piece)
        length -= len(piece)
    return bytes(out)


def timed(ops, errors, t0, fn):
    start = time.monotonic()
    ok = True
    try:
        fn()
    except OSError as e:  # every failure is data for the driver
        ok = False
        errors.append(f"{start - t0:.3f}: {e}")
    ops.append([round(start - t0, 6), round(time.monotonic() - start, 6), ok])


def loop(directory, seconds, out):
    ops, errors = [], []
    t0 = time.monotonic()
    i = 0
    payload_base = os.urandom(PAYLOAD)
    while time.monotonic() - t0 < seconds:
        path = os.path.join(directory, f"f{i}")
        payload = i.to_bytes(8, "little") + payload_base[8:]

        def one():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
            try:
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            with open(path, "rb") as f:
                back = f.read()
            if back != payload:
                raise OSError(f"{path}: read {len(back)} bytes that differ from the write")
            os.unlink(path)

        timed(ops, errors, t0, one)
        i += 1
    json.dump({"ops": ops, "errors": errors}, open(out, "w"))


def listing(directory, seconds, out):
    ops, errors = [], []
    t0 = time.monotonic()

    def one():
        names = os.listdir(directory)
        for name in names:
            os.lstat(os.path.join(directory, name))

    while time.monotonic() - t0 < seconds:
        timed(ops, errors, t0, one)
        time.sleep(0.05)
    json.dump({"ops": ops, "errors": errors}, open(out, "w"))


def read(path, out):
    ops, errors = [], []
    t0 = time.monotonic()
    total = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            start = time.monotonic()
            try:
                data = f.read(CHUNK)
            except OSError as e:
                errors.append(f"{start - t0:.3f}: {e}")
                ops.append([round(start - t0, 6), round(time.monotonic() - start, 6), False])
                break
            ok = data == pattern(total, len(data))
            if not ok:
                errors.append(f"{start - t0:.3f}: bytes at {total} differ from the pattern")
            ops.append([round(start - t0, 6), round(time.monotonic() - start, 6), ok])
            if not data:
                break
            total += len(data)
    json.dump({"ops": ops, "errors": errors, "bytes": total,
               "seconds": time.monotonic() - t0}, open(out, "w"))


def fill(path, mib):
    with open(path, "wb") as f:
        for k in range(mib):
            f.write(chunk(k))
        f.flush()
        os.fsync(f.fileno())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "loop":
        loop(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif cmd == "list":
        listing(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif cmd == "read":
        read(sys.argv[2], sys.argv[3])
    elif cmd == "fill":
        fill(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(f"stall_worker.py: unknown command '{cmd}'")


if __name__ == "__main__":
    main()
