#!/usr/bin/env python3
"""A database's files on a file system: SQLite in rollback-journal and WAL mode, fsync on
every commit (synchronous=full), inserts of random-size rows, deletes and updates in
transactions. Prints per mode its integrity check, its row count and an MD5 of every row,
so a run on a mount can be compared with the same run on a local directory.
  sqlite_workload.py DIR          create DIR/t-delete.db and DIR/t-wal.db, then print
  sqlite_workload.py DIR --check  only read the databases and print the same lines
"""
import hashlib
import os
import random
import sqlite3
import sys


def digest(conn):
    h = hashlib.md5()
    for k, v in conn.execute("select k, v from t order by k"):
        h.update(str(k).encode())
        h.update(v)
    integrity = conn.execute("pragma integrity_check").fetchone()[0]
    rows = conn.execute("select count(*) from t").fetchone()[0]
    return f"{integrity} {rows} {h.hexdigest()}"


def fill(path, mode):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    conn = sqlite3.connect(path)
    conn.execute(f"pragma journal_mode={mode}")
    conn.execute("pragma synchronous=full")
    conn.execute("create table t(k integer primary key, v blob)")
    rnd = random.Random(1)
    for batch in range(20):
        with conn:
            for i in range(250):
                conn.execute("insert into t values(?, ?)",
                             (batch * 250 + i, rnd.randbytes(rnd.randint(10, 3000))))
        with conn:
            conn.execute("delete from t where k % 7 = ? and k % 3 = 0", (batch % 7,))
            conn.execute("update t set v = ? where k % 11 = ?", (rnd.randbytes(500), batch % 11))
    return conn


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    directory, check = sys.argv[1], len(sys.argv) == 3
    for mode in ("delete", "wal"):
        path = os.path.join(directory, f"t-{mode}.db")
        conn = sqlite3.connect(path) if check else fill(path, mode)
        print(mode, digest(conn))
        conn.close()


if __name__ == "__main__":
    main()
