#!/usr/bin/env bash
# Clang's thread-safety analysis over every OrthoFS source file: what the annotations of
# common/thread_annotations.h claim (which mutex guards a member, which a function needs held)
# is checked at compile time, -Wthread-safety -Werror. Uses the compile commands of build/
# (deploy/build.sh writes them), so it only parses: no objects, no link.
#   deploy/check-thread-safety.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$top/build}
db=$build/compile_commands.json
[ -f "$db" ] || { echo "check-thread-safety: no $db: run deploy/build.sh first" >&2; exit 2; }
command -v clang++ > /dev/null || { echo "check-thread-safety: clang++ is not installed" >&2; exit 2; }
jobs=${ORTHOFS_JOBS:-$(nproc 2>/dev/null || echo 2)}
# One line per translation unit of ours: its directory, then the compiler's arguments with the
# compiler and the output dropped, for clang to parse only.
python3 - "$db" "$top" > "$build/thread-safety.cmds" << 'PY'
import json, shlex, sys
db, top = sys.argv[1], sys.argv[2]
for entry in json.load(open(db)):
    source = entry["file"]
    if not source.startswith(top + "/") or "/build" in source[len(top):]:
        continue
    args = shlex.split(entry["command"])[1:]
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        # Only the analysis is judged here: the build's own warnings are GCC's job.
        if a in ("-MD", "-MMD", "-c") or a.startswith(("-fsanitize", "-W")):
            continue
        kept.append(a)
    print(shlex.quote(entry["directory"]), " ".join(shlex.quote(a) for a in kept))
PY
count=$(wc -l < "$build/thread-safety.cmds")
failed=0
xargs -P "$jobs" -L 1 sh -c 'cd "$0" && exec clang++ -fsyntax-only -Wno-everything -Wthread-safety \
  -Werror=thread-safety "$@"' \
  < "$build/thread-safety.cmds" || failed=1
if [ "$failed" -ne 0 ]; then
  echo "check-thread-safety: the analysis found errors (above)" >&2
  exit 1
fi
echo "check-thread-safety: $count files, no thread-safety error"
