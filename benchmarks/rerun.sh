#!/usr/bin/env bash
# Rerun every benchmark output of the default judge after a change to it, into one folder, in
# the order the figures depend on each other: the stack's fit, the spans' fit, the twenty-split
# cross-validation, the in-sample evaluations, then speed. Each output starts with the command
# that made it; copy them into benchmarks/results/ (and docs/assets/) once read.
#
#   bash benchmarks/rerun.sh OUT [fit|spans|cv|eval|speed ...]   # default: all of them
#
# FOLD0 and FOLD1 are the models that score each fold of rag_dev.jsonl for the cross-validated
# figures (training/README.md, "Fold models"): FOLD0 is the shipped model, FOLD1 the committed
# model trained on fold 0 only. FIT holds the fit arguments of docs/model_card.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bash benchmarks/rerun.sh OUT [step ...]}
shift
STEPS=${*:-fit spans cv eval speed}
mkdir -p "$OUT"
PY=.venv/bin/python
DATA=../shared/data
FOLD0=${FOLD0:-src/ground_integrations/_model}
FOLD1=${FOLD1:-training/fold_models/e3-lr1-fold1}
FIT="--model $FOLD0 --fold-models $FOLD0 $FOLD1 --legacy-batching --max-pairs 4
     --features Summarization=missing_local,mean_missing_words,plain_missing_mean --general QnA
     --pin QnA=1:3x1+1x3:0.2-0.8 --pin Summarization:record=1:3x1:0.0-0.0
     --false-flag-cost Summarization=1.5 --false-flag-cost Summarization:brief=1.5
     --false-flag-cost Summarization:record=1.5"
FIT=$(echo $FIT)

run() { # run NAME COMMAND...: the command and its output into $OUT/NAME.txt
    local name=$1
    shift
    echo "== $name: $*" >&2
    { echo "\$ $*"; "$@" 2>&1; } >"$OUT/$name.txt"
}

for step in $STEPS; do
    case $step in
    fit) # the stack (stack.json), then the spans (spans.json) over it
        run default_cv $PY benchmarks/fit_default.py $FIT --write
        run one_split_current $PY benchmarks/fit_default.py $FIT
        ;;
    spans)
        run span_ranker $PY benchmarks/fit_spans.py --fold-models $FOLD0 $FOLD1 --seeds 20 --write
        ;;
    cv)
        run repeated_cv_default $PY benchmarks/repeated_cv.py --seeds 20 \
            --runs-json "$OUT/runs.json" -- $FIT
        ;;
    eval)
        run span_f1_rag_dev .venv/bin/ground eval $DATA/rag_dev.jsonl --fresh --no-progress \
            -o "$OUT/rag.results.jsonl"
        run one_fact_edits $PY benchmarks/one_fact_edits.py
        run example_report .venv/bin/ground eval $DATA/dev.jsonl --fresh --no-progress \
            -o "$OUT/dev.results.jsonl" --report "$OUT/example-report.html"
        run dev-calibrate .venv/bin/ground calibrate "$OUT/dev.results.jsonl" --max-pass-rate 0.05 \
            --confidence 0.9 -o "$OUT/dev-thresholds.json"
        run calibration_holdout $PY benchmarks/calibration_holdout.py "$OUT/dev.results.jsonl"
        run citations $PY benchmarks/bench_citations.py $DATA/dev.jsonl $DATA/rag_dev.jsonl
        ;;
    speed) # on a machine doing nothing else
        run cross_encoder_latency $PY benchmarks/bench_cross_encoder.py
        run scaling $PY benchmarks/bench_scaling.py
        run langchain_guard $PY benchmarks/bench_langchain_guard.py
        run llama_index_engine $PY benchmarks/bench_llama_index_engine.py
        run ray $PY benchmarks/bench_ray.py $DATA/dev.jsonl
        ;;
    *)
        echo "unknown step: $step (fit, spans, cv, eval, speed)" >&2
        exit 2
        ;;
    esac
done
