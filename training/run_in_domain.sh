#!/usr/bin/env bash
# The in-domain fine-tune (issue 19): two cross-fitted fold models, then the model on every fold.
# Each starts from the shipped NLI-trained model (recovered from its int8 export) and resumes
# from its own checkpoint if interrupted. Logs: training/runs/<run>/log.txt
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=${DATA:-../shared/data/rag_dev.jsonl}
[ -f training/runs/recovered/checkpoint.pt ] || $PY training/recover_checkpoint.py \
    --onnx src/ground_integrations/_model/model.onnx --out training/runs/recovered/checkpoint.pt
COMMON=(--init training/runs/recovered/checkpoint.pt --in-domain "$DATA" --folds 2
        --epochs 1 --lr 2e-5 --warmup 50 --max-length 128 --seed 13 --minutes 600)
for fold in 0 1 -1; do
    run=rag-fold$fold; [ "$fold" = -1 ] && run=rag-all
    mkdir -p training/runs/$run
    $PY training/train_cross_encoder.py --run $run --fold $fold "${COMMON[@]}" 2>&1 \
        | grep --line-buffered -v Warning | tee -a training/runs/$run/log.txt
done
