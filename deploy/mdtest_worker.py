#!/usr/bin/env python3
"""An mdtest-style metadata worker for deploy/compare-peers.

  mdtest_worker.py DIR FILES PROCESSES shared|separate

PROCESSES processes each create FILES empty files, then stat them all, then unlink them all,
in DIR (shared) or each in its own subdirectory of DIR (separate). The phases are timed
across all processes (each phase starts when all are ready). Prints one JSON object:
{"create": ops/s, "stat": ops/s, "unlink": ops/s}. Exits non-zero on any failed operation.
"""
import json
import multiprocessing
import os
import sys
import threading
import time


def worker(directory, files, rank, barrier, results):
    names = [os.path.join(directory, f"p{rank}-f{i}") for i in range(files)]
    for phase in ("create", "stat", "unlink"):
        try:
            barrier.wait()
            start = time.monotonic()
            for name in names:
                if phase == "create":
                    os.close(os.open(name, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644))
                elif phase == "stat":
                    os.stat(name)
                else:
                    os.unlink(name)
            results.put((phase, rank, start, time.monotonic(), None))
        except (OSError, threading.BrokenBarrierError) as e:
            barrier.abort()  # the others stop waiting for this one
            results.put((phase, rank, 0, 0, f"process {rank}, {phase}: {e}"))
            return


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("shared", "separate"):
        sys.exit(__doc__)
    directory, files, processes, layout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    dirs = []
    for rank in range(processes):
        d = directory if layout == "shared" else os.path.join(directory, f"d{rank}")
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    barrier = multiprocessing.Barrier(processes, timeout=3600)
    results = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(dirs[r], files, r, barrier, results))
             for r in range(processes)]
    for p in procs:
        p.start()
    spans = {}
    errors = []
    for p in procs:
        p.join()
    while not results.empty():
        phase, _, start, end, error = results.get()
        if error:
            errors.append(error)
            continue
        lo, hi = spans.get(phase, (start, end))
        spans[phase] = (min(lo, start), max(hi, end))
    if errors or len(spans) != 3:
        sys.exit("mdtest_worker: " + ("; ".join(errors) or "a process died"))
    total = files * processes
    print(json.dumps({phase: round(total / max(hi - lo, 1e-9), 1)
                      for phase, (lo, hi) in spans.items()}))


if __name__ == "__main__":
    main()
