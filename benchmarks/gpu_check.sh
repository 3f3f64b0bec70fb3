#!/usr/bin/env bash
# The GPU check, in one command, for a machine with one GPU (about 5 minutes on an H100, well
# under 8): the gpu-check preset of `rcstudy bench` (stage h), on full-size random-weight replicas
# of roberta-large and Llama-2-7B built on the spot (nothing downloaded):
#   - fine-tuning roberta-large at 256 tokens, ours vs the tuned Trainer, bf16, fused AdamW;
#   - scoring LogiQA options with the Llama-2-7B replica, ours vs lm-evaluation-harness, and
#     greedy generation (seconds per decoding step, share of the memory bandwidth);
#   - the ReClor chapter's full-profile roberta-large job (one seed, one epoch) timed against
#     `rcstudy plan`'s prediction for the same job (target: within 25%).
# Writes benchmarks/results/cuda-check.json and .md (the utilisation table `rcstudy plan` reads)
# and copies them to $OUT when that is set. Usage, from the project's root:
#   RCSTUDY_DATA=/path/to/data benchmarks/gpu_check.sh [-p name=value ...]
# The data folder needs reclor/ and logiqa/ (the real ones: the fixtures work, but time too little
# work to check the plan). Python packages the machine lacks (lm-eval, datasets, jupytext, ...)
# may be carried as wheels in .gpu-wheels/, installed first without the network.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ -d .gpu-wheels ]; then
  "$PYTHON" -m pip install --quiet --no-index --no-deps .gpu-wheels/*.whl
fi
export PYTHONPATH="$PWD/lib${PYTHONPATH:+:$PYTHONPATH}"
export RCSTUDY_DATA=${RCSTUDY_DATA:-$PWD/data}
export RCSTUDY_CACHE=${RCSTUDY_CACHE:-$(mktemp -d)}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
start=$(date +%s)
timeout 540 "$PYTHON" -m rcstudy bench --preset gpu-check --device cuda "$@"
echo "gpu check: $(( $(date +%s) - start )) s"
if [ -n "${OUT:-}" ]; then
  cp benchmarks/results/cuda-check.json benchmarks/results/cuda-check.md "$OUT"/
fi
