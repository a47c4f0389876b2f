#!/usr/bin/env python3
"""One of several writers of one SQLite database (rollback journal, the default) on
different clients of a shared file system, which SQLite keeps apart with fcntl locks. Each
transaction reads a counter, adds one and inserts a row: a lost update, a page read stale
from a cache or a torn write shows as a counter that differs from the row count, missing
rows or a failed integrity check.
  sqlite_shared_writer.py DB init           create the database
  sqlite_shared_writer.py DB write NAME N   N transactions as writer NAME
  sqlite_shared_writer.py DB check          print "<integrity> <rows> <counter> <names>"
"""
import sqlite3
import sys


def connect(path):
    # A long busy timeout: the other writers hold the lock for milliseconds each, many times.
    conn = sqlite3.connect(path, timeout=300, isolation_level=None)
    conn.execute("pragma synchronous=full")
    return conn


def main():
    path, command = sys.argv[1], sys.argv[2]
    conn = connect(path)
    if command == "init":
        conn.execute("create table counter(n integer)")
        conn.execute("insert into counter values(0)")
        conn.execute("create table t(k integer primary key, writer text, n integer, pad blob)")
    elif command == "write":
        name, count = sys.argv[3], int(sys.argv[4])
        for i in range(count):
            conn.execute("begin immediate")
            n = conn.execute("select n from counter").fetchone()[0] + 1
            conn.execute("update counter set n = ?", (n,))
            conn.execute("insert into t(writer, n, pad) values(?, ?, ?)",
                         (name, i, bytes(500 + (i * 37) % 3000)))
            conn.execute("commit")
    elif command == "check":
        integrity = conn.execute("pragma integrity_check").fetchone()[0]
        rows = conn.execute("select count(*) from t").fetchone()[0]
        counter = conn.execute("select n from counter").fetchone()[0]
        names = ",".join(f"{w}:{c}:{lo}-{hi}" for w, c, lo, hi in conn.execute(
            "select writer, count(*), min(n), max(n) from t group by writer order by writer"))
        print(integrity, rows, counter, names)
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
