#!/usr/bin/env bash
# The GPU checks and figures of docs/performance.md ("GPU") in one run, on one CUDA device:
# the machine and its two ceilings, the `gpu` tests, training tokens/s of the paper's decoder
# at 10k and 50k subwords (ours vs the paper-style loop, with a profile of ours), and batched
# beam search over 10,000 sentences vs the one-sentence-at-a-time released search.
#
#   OUT=gpu-results bash benchmarks/perf/gpu.sh CORPUS [WORKDIR]
#
# CORPUS: one sentence per line (docs/performance.md names the one used); WORKDIR keeps the
# subword vocabulary and the generation benchmark's decoder between runs (made on the first).
# $OUT gets machine.json, gpu-tests.log, results.json (every benchmark report), profiles.txt
# and benchmarks.log; the last lines printed summarise the reports. Each benchmark runs with
# the mixture of softmaxes fused (the default on CUDA) and eager (the figure before fusing).
set -u -o pipefail
corpus=${1:?usage: OUT=dir bash benchmarks/perf/gpu.sh CORPUS [WORKDIR]}
work=${2:-$(mktemp -d)}
out=${OUT:-gpu-results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

python3 - "$out/machine.json" <<'EOF'
"""The device, the software, and the two ceilings: bf16 and fp32 matrix products, a copy."""
import json, subprocess, sys, time
import torch

def rate(fn, flop_or_bytes, repeats=20):
    fn(); torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record(); fn(); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return flop_or_bytes / times[len(times) // 2] / 1e12

n = 8192
a, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(2))
af, bf = a.float(), b.float()
src = torch.randn(2**30 // 4, device="cuda"); dst = torch.empty_like(src)
info = {
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
    "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
    "driver": subprocess.run(["nvidia-smi", "--query-gpu=driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True).stdout.strip(),
    "bf16_matmul_tflops": rate(lambda: a @ b, 2 * n**3),
    "fp32_matmul_tflops": rate(lambda: af @ bf, 2 * n**3),
    "copy_tb_per_s": rate(lambda: dst.copy_(src), 2 * src.numel() * 4),
}
json.dump(info, open(sys.argv[1], "w"), indent=1)
print(json.dumps(info))
EOF

python3 -m pytest -m gpu -ra -p no:cacheprovider tests/test_gpu.py 2>&1 | tee "$out/gpu-tests.log"
tests=$?  # the benchmarks run either way; the script's status says whether the tests passed

common=(--device cuda --paper --corpus "$corpus" --sentences 10000 --train-sentences 100000
        --bpe-size 10000 --dim 100 --batch-size 128 --workdir "$work")
reports="$work/reports"
mkdir -p "$reports"
log="$out/benchmarks.log"
: > "$log"
for vocab in 10000 50000; do
    for mixture in fused eager; do
        flags=(--steps 150 --warmup 5 --vocab-size "$vocab" --out "$reports/training-$vocab-$mixture.json")
        [ "$mixture" = eager ] && flags+=(--eager-mixture)
        [ "$mixture" = fused ] && flags+=(--profile "$reports/profile-training-$vocab.txt")
        python3 benchmarks/perf/training.py "${common[@]}" "${flags[@]}" >> "$log" 2>&1
    done
done
# The decoder (the paper's architecture, --plain-training: it regenerates sentences of their
# real length) is trained once, 20 epochs, and kept in $work/model for the later runs.
search=(--epochs 20 --plain-training --beam 10 --max-len 30 --generate-batch 2000
        --baseline-sentences 100)
python3 benchmarks/perf/generation.py "${common[@]}" "${search[@]}" --released-sentences 20 \
    --profile "$reports/profile-generation.txt" --out "$reports/generation-bf16-fused.json" >> "$log" 2>&1
python3 benchmarks/perf/generation.py "${common[@]}" "${search[@]}" --released-sentences 0 \
    --eager-mixture --out "$reports/generation-bf16-eager.json" >> "$log" 2>&1
python3 benchmarks/perf/generation.py "${common[@]}" "${search[@]}" --released-sentences 0 \
    --precision fp32 --out "$reports/generation-fp32-fused.json" >> "$log" 2>&1

python3 - "$reports" "$out" <<'EOF'
"""One results.json of every report, one profiles.txt of every table, and a summary."""
import json, pathlib, sys
reports, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
results = {p.stem: json.loads(p.read_text()) for p in sorted(reports.glob("*.json"))}
(out / "results.json").write_text(json.dumps(results, indent=1))
(out / "profiles.txt").write_text("".join(f"== {p.stem}\n{p.read_text()}\n"
                                          for p in sorted(reports.glob("profile-*.txt"))))
for name, r in results.items():
    profile = {k: v for k, v in (r.get("profile_of_ours") or {}).items()
               if k in ("wall_s", "gpu_busy_s", "launches")}
    if "ratio" in r:
        print(name, "ours", r["ours"], "paper-style", r["paper_style"], "ratio",
              round(r["ratio"], 2), profile)
    else:
        print(name, "ours", r["ours"], "baseline", r["baseline"], "released", r.get("released"),
              "mean subwords", round(r["mean_output_subwords"], 2), profile)
EOF
exit "$tests"
