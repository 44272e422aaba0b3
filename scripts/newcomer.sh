#!/usr/bin/env bash
# What a new user does in the first hour, from a clean STILLWEB_HOME; exits non-zero at the first surprise.
#   quickstart (a small world: STILLWEB_QUICKSTART_ARTICLES, default 300 here; the full 20,000-article world
#   takes minutes), build a small snapshot, generate and show tasks, the reference agent through gymnasium
#   (recorded), serve and call /retrieve, replay the recording from another directory.
# Usage: bash scripts/newcomer.sh            (uses `stillweb` and `python3` from PATH)
set -euo pipefail
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
export STILLWEB_HOME="$WORK/home" STILLWEB_QUICKSTART_ARTICLES="${STILLWEB_QUICKSTART_ARTICLES:-300}"
surprise() { echo "newcomer: SURPRISE at step '$STEP': $*" >&2; exit 1; }
expect() { grep -q -- "$1" "$2" || { cat "$2" >&2; surprise "expected '$1' in the output above"; }; }
cd "$WORK"

STEP="quickstart"
stillweb quickstart > quickstart.txt
expect "fingerprint:" quickstart.txt
expect "next:" quickstart.txt
[ "$(grep -c '^  hops:' quickstart.txt)" = 1 ] || surprise "the hops line is printed $(grep -c '^  hops:' quickstart.txt) times"

STEP="build a small snapshot"
stillweb build synthetic --articles 300 --seed 1 --workers 1 --quiet --out snapshots/small > build.txt
expect "fingerprint:" build.txt

STEP="generate tasks"
stillweb tasks generate snapshots/small --name first --count 12 --allow-partial --verify -1 --no-progress > generate.txt
expect "wrote" generate.txt

STEP="show tasks"
stillweb tasks show snapshots/small first > list.txt
TASK_ID=$(awk 'NR==1 {print $2}' list.txt)
[ -n "$TASK_ID" ] || surprise "tasks show listed no task"
stillweb tasks show snapshots/small first "$TASK_ID" > task.txt
expect "answer:" task.txt
expect "reference steps:" task.txt
if stillweb tasks show snapshots/small first sw-not-a-task 2> bad.txt; then surprise "an unknown task id was accepted"; fi
expect "list them with: stillweb tasks show" bad.txt

STEP="reference agent through gymnasium"
python3 - <<'PY'
import gymnasium as gym
import stillweb.envs
from stillweb.envs import RecordEpisodes, ReferenceAgent, run_episode

env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", snapshot="snapshots/small", tasks="first"), "episodes.jsonl")
tasks = env.unwrapped.tasks
for task in tasks:
    summary = run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": task.task_id})
    assert summary["outcome"] == 1.0, f"the reference agent failed {task.task_id} with default limits: {summary}"
env.close()
print(f"reference agent solved {len(tasks)} of {len(tasks)} tasks with default limits")
PY

STEP="serve and call /retrieve"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
stillweb serve snapshots/small --port "$PORT" > serve.txt 2>&1 &
SERVER_PID=$!
python3 - "$PORT" <<'PY'
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
for _ in range(600):
    try:
        urllib.request.urlopen(base + "/health", timeout=2)
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the server never answered /health")
request = urllib.request.Request(base + "/retrieve", data=json.dumps({"queries": ["river city"], "topk": 3, "return_scores": True}).encode(),
                                 headers={"Content-Type": "application/json"})
body = json.load(urllib.request.urlopen(request, timeout=30))
assert len(body["result"][0]) == 3, body
print("retrieve:", [hit["document"]["contents"][:40] for hit in body["result"][0]])
PY
kill -INT "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=""
expect "listening on http://127.0.0.1:$PORT" serve.txt
expect "task sets first" serve.txt
expect "stopped serving" serve.txt

STEP="replay from another directory"
mkdir elsewhere && cd elsewhere
stillweb replay ../episodes.jsonl > replay.txt
expect "identical" replay.txt
expect "found by" replay.txt
cd ..

echo "newcomer: every step worked as documented"
