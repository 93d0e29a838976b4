#!/usr/bin/env bash
# The lab's long-context regime (issue 45 item 4): L_train 1024, head dimension 64 (32 pairs), base 10^4.
# Three runs, each resumable (a killed run, started again with the same command, continues from OUT.partial/).
# Usage: bash scripts/regime_run.sh extend | nope | alibi     (under nice, one core each)
set -euo pipefail
cd "$(dirname "$0")/.."
COMMON=(--train-len 1024 --d-model 64 --n-layers 2 --batch-size 8 --steps 2000 --seeds 0,1,2,3,4
        --passkey --passkey-rows 4 --passkey-depths 0,50,100 --passkey-samples 8
        --eval-lens 1024,2048,4096,8192 --n-eval-spans 8 --pretrain-heldout-every 100 --jobs 1)
case "${1:-}" in
  # rope (one head of 64), every training-free reading, and fine-tunes at 2 × L_train
  extend) python -m poslib.lab --extend "${COMMON[@]}" --n-heads 1 --dca \
            --finetune-multiple 2 --finetune-steps 300 --heldout-every 25 --heldout-spans 4 \
            --out results/lab_regime_extend.json ;;
  # nope: the same shape as rope (one head of 64), so it pairs with the extend run's rope by seed
  nope)   python -m poslib.lab --schemes nope "${COMMON[@]}" --n-heads 1 --out results/lab_regime_nope.json ;;
  # alibi: the same width in 4 heads of 16, so that it has 4 slopes (one head would have one slope, 2^-8)
  alibi)  python -m poslib.lab --schemes alibi "${COMMON[@]}" --n-heads 4 --out results/lab_regime_alibi.json ;;
  *) echo "usage: $0 extend|nope|alibi" >&2; exit 2 ;;
esac
