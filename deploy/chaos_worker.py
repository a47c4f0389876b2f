#!/usr/bin/env python3
"""File churn for deploy/chaos-run: one process's creates, reads, appends, renames, unlinks,
mkdirs and rmdirs in MOUNT/DIR for SECONDS, checking what it reads against what it wrote.

  chaos_worker.py run MOUNT DIR SECONDS SEED STATE   churn; the tree it expects to STATE (JSON)
  chaos_worker.py verify MOUNT DIR STATE             the tree under MOUNT/DIR is exactly STATE's

Every error and every mismatch goes to stderr as one line; the exit status is 1 if any.
"""
import errno
import hashlib
import json
import os
import random
import sys
import time

SIZES = [0, 1, 4096, 70000, 131072, 300001, 600000]


def log(name, what):
    print(f"{time.strftime('%H:%M:%S')} {name}: {what}", file=sys.stderr, flush=True)


def run(mount, name, seconds, seed, state_path):
    rng = random.Random(seed)
    root = os.path.join(mount, name)
    os.makedirs(root, exist_ok=True)
    files = {}  # path relative to root -> md5 of its bytes
    dirs = {""}
    problems = ops = 0

    def path(rel):
        return os.path.join(root, rel)

    def new_name(prefix):
        return f"{prefix}{rng.randrange(10**9)}"

    end = time.time() + seconds
    while time.time() < end:
        ops += 1
        r = rng.random()
        op = "create"
        try:
            if r < 0.35 or not files:
                rel = os.path.join(rng.choice(sorted(dirs)), new_name("f"))
                data = rng.randbytes(rng.choice(SIZES))
                with open(path(rel), "wb") as f:
                    f.write(data)
                files[rel] = hashlib.md5(data).hexdigest()
            elif r < 0.55:
                op = "read"
                rel = rng.choice(sorted(files))
                with open(path(rel), "rb") as f:
                    got = hashlib.md5(f.read()).hexdigest()
                if got != files[rel]:
                    problems += 1
                    log(name, f"read {rel}: other bytes than written")
                    files[rel] = got
            elif r < 0.65:
                op = "append"
                rel = rng.choice(sorted(files))
                extra = rng.randbytes(rng.randrange(1, 50000))
                with open(path(rel), "rb") as f:
                    old = f.read()
                with open(path(rel), "ab") as f:
                    f.write(extra)
                files[rel] = hashlib.md5(old + extra).hexdigest()
            elif r < 0.78:
                op = "rename"
                rel = rng.choice(sorted(files))
                to = os.path.join(rng.choice(sorted(dirs)), new_name("f"))
                os.rename(path(rel), path(to))
                files[to] = files.pop(rel)
            elif r < 0.88:
                op = "unlink"
                rel = rng.choice(sorted(files))
                os.unlink(path(rel))
                del files[rel]
            elif r < 0.94:
                op = "mkdir"
                rel = os.path.join(rng.choice(sorted(dirs)), new_name("d"))
                if rel.count("/") < 3:
                    os.mkdir(path(rel))
                    dirs.add(rel)
            else:
                op = "rmdir"
                empty = [d for d in dirs if d and not any(k.startswith(d + "/") for k in files)
                         and not any(e.startswith(d + "/") for e in dirs)]
                if empty:
                    rel = rng.choice(sorted(empty))
                    os.rmdir(path(rel))
                    dirs.discard(rel)
        except OSError as e:
            problems += 1
            log(name, f"{op} {e.filename or ''}: {errno.errorcode.get(e.errno, e.errno)} {e}")
            # What the failed call left is unknown: keep only names that are there.
            files = {k: v for k, v in files.items() if os.path.exists(path(k))}
    with open(state_path, "w") as f:
        json.dump({"files": files, "dirs": sorted(dirs)}, f)
    log(name, f"{ops} operations, {problems} errors, {len(files)} files")
    return 1 if problems else 0


def verify(mount, name, state_path):
    with open(state_path) as f:
        state = json.load(f)
    root = os.path.join(mount, name)
    seen, seen_dirs = set(), set()
    for dirpath, _, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel
        seen_dirs.add(rel)
        seen.update(os.path.join(rel, fn) for fn in filenames)
    want = state["files"]
    problems = [f"missing {k}" for k in sorted(set(want) - seen)]
    problems += [f"unexpected {k}" for k in sorted(seen - set(want))]
    for k in sorted(set(want) & seen):
        try:
            with open(os.path.join(root, k), "rb") as f:
                if hashlib.md5(f.read()).hexdigest() != want[k]:
                    problems.append(f"other bytes in {k}")
        except OSError as e:
            problems.append(f"cannot read {k}: {e}")
    problems += [f"directory differs: {d}" for d in sorted(set(state["dirs"]) ^ seen_dirs)]
    for p in problems:
        log(name, p)
    log(name, f"verified {len(want)} files, {len(problems)} problems")
    return 1 if problems else 0


def main(argv):
    if len(argv) == 7 and argv[1] == "run":
        return run(argv[2], argv[3], float(argv[4]), int(argv[5]), argv[6])
    if len(argv) == 5 and argv[1] == "verify":
        return verify(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
